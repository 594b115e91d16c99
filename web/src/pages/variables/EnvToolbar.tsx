import type { Environment } from '@svcenv/contract';
import { Button } from '../../ui.js';
import { ExportMenu } from './ExportMenu.js';
import type { VarListing } from './useVarListing.js';

/** Above the variables: the key filter, then what applies to the whole environment. */
export function EnvToolbar({
  projectId,
  env,
  filter,
  onFilter,
  onDeletedKeys,
  listing,
  canWrite,
  onImport,
  canImport,
  canProtect,
  canAdminister,
  onToggleProtect,
  onToggleApproval,
  onColor,
  onDeleteEnv,
}: {
  projectId: string;
  env: Environment;
  filter: string;
  onFilter: (f: string) => void;
  /** Opens the keys deleted from this environment (restorable from their history, D27). */
  onDeletedKeys: () => void;
  listing: VarListing;
  /** Write on this environment: reveal, import, export with values. */
  canWrite: boolean;
  onImport: () => void;
  /** Import writes directly: not offered while the user's changes go through a change request (D47). */
  canImport: boolean;
  /** Owner-only: protection and approval (D21, D47). */
  canProtect: boolean;
  /** Project administration: the colour and deleting the environment. */
  canAdminister: boolean;
  onToggleProtect: () => void;
  onToggleApproval: () => void;
  onColor: (color: string) => void;
  onDeleteEnv: () => void;
}) {
  return (
    <div class="toolbar">
      <input
        class="input input-search"
        type="search"
        placeholder="Filter by key or value"
        aria-label="Filter by key or value"
        value={filter}
        onInput={(e) => onFilter(e.currentTarget.value)}
      />
      <div class="toolbar-spacer" />
      {canWrite && (
        <>
          <Button
            size="sm"
            onClick={() => listing.reveal(null)}
            disabled={listing.forbiddenReveal}
            aria-pressed={listing.revealAll}
          >
            {listing.revealAll ? 'Hide values' : 'Reveal all'}
          </Button>
          {canImport && (
            <Button size="sm" onClick={onImport}>
              Import .env
            </Button>
          )}
        </>
      )}
      <Button size="sm" variant="ghost" onClick={onDeletedKeys}>
        Deleted keys
      </Button>
      <ExportMenu projectId={projectId} env={env.name} withValues={canWrite} />
      {canAdminister && (
        <input
          type="color"
          class="env-color"
          aria-label={`Colour of ${env.name}`}
          title={`Colour of ${env.name}`}
          value={env.color}
          onChange={(e) => onColor(e.currentTarget.value)}
        />
      )}
      {canProtect && (
        <Button size="sm" onClick={onToggleProtect}>
          {env.protected ? 'Unprotect' : 'Protect'}
        </Button>
      )}
      {canProtect && (
        <label class="approval-toggle">
          <input
            type="checkbox"
            role="switch"
            aria-checked={env.requireApproval}
            checked={env.requireApproval}
            onChange={onToggleApproval}
          />
          Require approval
        </label>
      )}
      {canAdminister && (
        <Button size="sm" variant="ghost" onClick={onDeleteEnv}>
          Delete environment
        </Button>
      )}
    </div>
  );
}
