/**
 * Where to go after login (ADR 0014): the page asked for before it, when it is a path of this site (one
 * leading `/`, not `//host`), else the projects.
 */
export function afterLogin(next: string | null): string {
  return next && /^\/(?!\/)/.test(next) && !next.startsWith('/\\') ? next : '/projects';
}
