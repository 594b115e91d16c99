import type { AccessToken } from '@svcenv/contract';
import { cidrSummary } from '../../lib/cidrs.js';
import { dateOnly, relativeTime } from '../../lib/format.js';
import { Button, Pill } from '../../ui.js';

/** One token: name, prefix, scope, what it reaches and from where (D62), last use, expiry; Rotate and Revoke. */
export function TokenRow({
  token: t,
  projectName,
  onRotate,
  onRevoke,
}: {
  token: AccessToken;
  projectName: string;
  onRotate: () => void;
  onRevoke: () => void;
}) {
  const expired = t.expiresAt && Date.parse(t.expiresAt) < Date.now();
  return (
    <tr>
      <td data-label="Name">
        <strong>{t.name}</strong>
        <div class="muted small">created {relativeTime(t.createdAt)}</div>
      </td>
      <td data-label="Token">
        <code>{t.tokenPrefix}…</code>
      </td>
      <td data-label="Scope">
        <Pill tone={t.scope === 'write' ? 'warn' : 'neutral'}>{t.scope}</Pill>
      </td>
      <td class="small" data-label="Access">
        {projectName}
        <div class="muted">{t.envs.includes('*') ? 'every environment' : t.envs.join(', ')}</div>
        {t.trustedCidrs.length > 0 && (
          <div class="muted" data-testid="token-cidrs">
            from {cidrSummary(t.trustedCidrs)}
          </div>
        )}
      </td>
      <td class="small" data-label="Last used">
        {relativeTime(t.lastUsedAt)}
      </td>
      <td class="small" data-label="Expires">
        {t.expiresAt ? (
          expired ? (
            <Pill tone="bad">expired</Pill>
          ) : (
            dateOnly(t.expiresAt)
          )
        ) : (
          <span class="muted">never</span>
        )}
      </td>
      <td class="cell-actions">
        <div class="row-actions">
          <Button size="sm" variant="ghost" aria-label={`Rotate ${t.name}`} onClick={onRotate}>
            Rotate
          </Button>
          <Button size="sm" variant="ghost" class="danger-text" aria-label={`Revoke ${t.name}`} onClick={onRevoke}>
            Revoke
          </Button>
        </div>
      </td>
    </tr>
  );
}
