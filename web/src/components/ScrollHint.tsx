import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A wide table that scrolls sideways inside its own box (its `table-wrap`), never the page: when it does not
 * fit, a short hint says so above it and a shading marks each edge with more beyond it, gone once scrolled
 * to that end. `hint` is the sentence ("Scroll for more environments").
 */
export function ScrollHint({ hint, children }: { hint: string; children: ComponentChildren }) {
  const box = useRef<HTMLDivElement>(null);
  const [edges, setEdges] = useState({ overflow: false, left: false, right: false });
  useEffect(() => {
    const root = box.current;
    const el = root?.querySelector<HTMLElement>('.table-wrap') ?? root;
    if (!el) return;
    const measure = () => {
      const overflow = el.scrollWidth > el.clientWidth + 1;
      setEdges({
        overflow,
        left: overflow && el.scrollLeft > 1,
        right: overflow && el.scrollLeft + el.clientWidth < el.scrollWidth - 1,
      });
    };
    measure();
    el.addEventListener('scroll', measure, { passive: true });
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    const table = el.firstElementChild;
    if (table) ro.observe(table);
    return () => {
      el.removeEventListener('scroll', measure);
      ro.disconnect();
    };
  }, []);
  return (
    <div
      ref={box}
      class="scroll-hint-box"
      data-testid="scroll-box"
      data-overflow={edges.overflow ? 'true' : 'false'}
      data-more-left={edges.left ? 'true' : 'false'}
      data-more-right={edges.right ? 'true' : 'false'}
    >
      {edges.overflow && (
        <p class="scroll-hint muted small" data-testid="scroll-hint">
          {hint} <span aria-hidden="true">→</span>
        </p>
      )}
      <div class="scroll-hint-frame">{children}</div>
    </div>
  );
}
