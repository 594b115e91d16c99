import type { Connection, Project } from '@svcenv/contract';
import { listConnections } from '../../api/credentials.js';
import { useAsync } from '../../hooks.js';
import { KIND_LABEL } from '../../lib/credentials.js';
import { Field } from '../../ui.js';

/**
 * The connection a dynamic secret or a rotation uses. Owners and project Admins pick from the list (D70: only
 * they may read it); anyone else with write types the name a project Admin gave them (D57: no request that
 * would be refused).
 */
export function ConnectionPicker({
  project,
  value,
  onValue,
  onKind,
  error,
}: {
  project: Project;
  value: string;
  onValue: (name: string) => void;
  /** The picked connection's kind, when it is known. */
  onKind?: (kind: Connection['kind']) => void;
  error: unknown;
}) {
  const admin = project.access.admin;
  const list = useAsync(
    () => (admin ? listConnections(project.id) : Promise.resolve({ connections: [] as Connection[] })),
    [project.id, admin],
  );
  const conns = list.data?.connections ?? [];
  if (!admin || list.error) {
    return (
      <Field label="Connection" name="connection" error={error} hint="Its name, as a project Admin set it up.">
        <input
          class="input mono"
          name="connection"
          value={value}
          required
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      </Field>
    );
  }
  return (
    <Field
      label="Connection"
      name="connection"
      error={error}
      hint={conns.length === 0 && !list.loading ? 'No connections yet: add one on the Connections tab.' : undefined}
    >
      <select
        class="input"
        name="connection"
        value={value}
        required
        onChange={(e) => {
          const name = e.currentTarget.value;
          onValue(name);
          const kind = conns.find((c) => c.name === name)?.kind;
          if (kind) onKind?.(kind);
        }}
      >
        <option value="" disabled>
          Choose a connection
        </option>
        {conns.map((c) => (
          <option key={c.name} value={c.name}>
            {c.name} ({KIND_LABEL[c.kind]})
          </option>
        ))}
      </select>
    </Field>
  );
}
