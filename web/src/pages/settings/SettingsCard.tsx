import type { ComponentChildren } from 'preact';

/** One card of the settings grid; `wide` spans the grid's width. */
export function SettingsCard({
  title,
  children,
  wide,
}: {
  title: string;
  children: ComponentChildren;
  wide?: boolean;
}) {
  return (
    <section class={`card ${wide ? 'card-wide' : ''}`} aria-label={title}>
      <h2 class="card-title">{title}</h2>
      {children}
    </section>
  );
}
