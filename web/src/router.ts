import { useEffect, useState } from 'preact/hooks';

/** A small history router: the server answers every non-/v1 GET with the app (server/src/routes/web.ts). */
const listeners = new Set<() => void>();
addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function navigate(to: string, replace = false): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
  scrollTo(0, 0);
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, force] = useState(0);
  const rendered = location.pathname + location.search;
  useEffect(() => {
    const l = () => force((n) => n + 1);
    listeners.add(l);
    // A child may have navigated in its own effect, which runs before this one subscribed.
    if (location.pathname + location.search !== rendered) l();
    return () => {
      listeners.delete(l);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** `/projects/:id` against `/projects/abc` → {id:'abc'}; null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i]!;
    const seg = s[i]!;
    if (part.startsWith(':')) out[part.slice(1)] = decodeURIComponent(seg);
    else if (part !== seg) return null;
  }
  return out;
}

/** A link that navigates in place (Ctrl/Cmd-click still opens a new tab). */
export function linkHandler(to: string) {
  return (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
}
