import { actorKind } from '../lib/audit.js';

/**
 * An actor's display name read as who it is: a workload identity (D60) gets a badge before its name rather
 * than the raw `identity:<name>`; a token keeps D34's `token:<name>`, a person is their name.
 */
export function Actor({ name }: { name: string }) {
  const a = actorKind(name);
  if (a.kind !== 'identity') return <>{name}</>;
  return (
    <span class="actor" data-actor-kind="identity">
      <span class="pill pill-info actor-kind">identity</span> {a.name}
    </span>
  );
}
