import { actorKind } from '../lib/audit.js';

/**
 * An actor's display name read as who it is: an identity (D60) or a token gets a badge before its name
 * rather than the raw `identity:<name>`; a person is their name.
 */
export function Actor({ name }: { name: string }) {
  const a = actorKind(name);
  if (a.kind === 'user') return <>{a.name}</>;
  return (
    <span class="actor" data-actor-kind={a.kind}>
      <span class={`pill pill-${a.kind === 'identity' ? 'info' : 'neutral'} actor-kind`}>{a.kind}</span> {a.name}
    </span>
  );
}
