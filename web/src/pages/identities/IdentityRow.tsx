import type { Identity } from '@svcenv/contract';
import { cidrSummary } from '../../lib/cidrs.js';
import { relativeTime } from '../../lib/format.js';
import { Button, Pill } from '../../ui.js';

/** A lifetime in the largest whole unit: 900 → "15 min", 7200 → "2 h". */
const lifetime = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);

/** One identity: who may sign in as it, what its token may do, from where, and its last login. */
export function IdentityRow({
  identity: i,
  projectName,
  onSetup,
  onEdit,
  onDelete,
}: {
  identity: Identity;
  projectName: string;
  onSetup: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const claims = Object.entries(i.claims);
  return (
    <tr data-testid="identity-row">
      <td data-label="Name">
        <strong>{i.name}</strong>
        <div class="muted small">created {relativeTime(i.createdAt)}</div>
      </td>
      <td class="small identity-issuer" data-label="Issuer">
        <div>{i.issuer}</div>
        <div class="muted">aud {i.audience}</div>
      </td>
      <td class="small" data-label="Matches">
        <div>{i.subject ? <code>{i.subject}</code> : <span class="muted">any subject</span>}</div>
        {claims.map(([k, v]) => (
          <div key={k} class="muted">
            {k} = <code>{v}</code>
          </div>
        ))}
      </td>
      <td class="small" data-label="Access">
        <div>
          <Pill tone={i.scope === 'write' ? 'warn' : 'neutral'}>{i.scope}</Pill> {projectName}
        </div>
        <div class="muted">{i.envs.includes('*') ? 'every environment' : i.envs.join(', ')}</div>
        <div class="muted">tokens live {lifetime(i.ttlSeconds)}</div>
      </td>
      <td class="small" data-label="Allowed from" data-testid="identity-cidrs">
        {cidrSummary(i.trustedCidrs)}
      </td>
      <td class="small" data-label="Last login">
        {i.lastLoginAt ? relativeTime(i.lastLoginAt) : <span class="muted">never</span>}
      </td>
      <td class="cell-actions">
        <div class="row-actions">
          <Button size="sm" variant="ghost" aria-label={`Set up ${i.name}`} onClick={onSetup}>
            Set up
          </Button>
          <Button size="sm" variant="ghost" aria-label={`Edit ${i.name}`} onClick={onEdit}>
            Edit
          </Button>
          <Button size="sm" variant="ghost" class="danger-text" aria-label={`Delete ${i.name}`} onClick={onDelete}>
            Delete
          </Button>
        </div>
      </td>
    </tr>
  );
}
