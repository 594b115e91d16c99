import type { Environment, Project } from '@svcenv/contract';
import { PROTECTED_HELP } from '../../lib/access.js';
import { Button } from '../../ui.js';
import { EnvAccessButton } from '../access/EnvAccessList.js';
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
    </div>
  );
}

/**
 * The environment's own settings, on a row of their own under the toolbar (they are about the environment,
 * not its variables, and "Delete environment" never wraps alone under the filter): colour, protection with
 * what it means, approval, delete.
 */
export function EnvSettings({
  project,
  env,
  canProtect,
  canAdminister,
  onToggleProtect,
  onToggleApproval,
  onColor,
  onDeleteEnv,
}: {
  project: Project;
  env: Environment;
  /** Owner-only: protection and approval (D21, D47). */
  canProtect: boolean;
  /** Project administration: the colour and deleting the environment. */
  canAdminister: boolean;
  onToggleProtect: () => void;
  onToggleApproval: () => void;
  onColor: (color: string) => void;
  onDeleteEnv: () => void;
}) {
  if (!canProtect && !canAdminister) return null;
  return (
    <section class="env-settings" aria-label={`Settings of ${env.name}`}>
      <div class="env-settings-row">
        <span class="env-settings-title">Environment</span>
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
          <Button size="sm" onClick={onToggleProtect} title={PROTECTED_HELP}>
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
        {/* D76: who can read or write this environment now, and why; shown only to those who may ask. */}
        <EnvAccessButton project={project} env={env.name} />
        <div class="toolbar-spacer" />
        {canAdminister && (
          <Button size="sm" variant="ghost" class="danger-text nowrap" onClick={onDeleteEnv}>
            Delete environment
          </Button>
        )}
      </div>
      <p class="note" data-testid="protected-help">
        {env.protected
          ? `${env.name} is protected. ${PROTECTED_HELP.slice('Protected: '.length)} Changes to it are confirmed before they are saved.`
          : `Not protected. ${PROTECTED_HELP}`}
      </p>
    </section>
  );
}
