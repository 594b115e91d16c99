import type { Environment, Project, Variable } from '@svcenv/contract';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { updateVar, upsertVars } from '../../api/variables.js';
import { RefScope, useRefScope } from '../../components/RefField.js';
import { useSaveValidated } from '../../components/Unresolved.js';
import { canRead, canWrite, readOnlyNote, writesNeedApproval } from '../../lib/access.js';
import { isMasked } from '../../lib/mask.js';
import { useAction, useToast } from '../../toast.js';
import { Button, Empty, ErrorBanner, Spinner } from '../../ui.js';
import { ApprovalNote, PendingBar, PendingCtx, usePendingChanges } from '../change-requests/pending.js';
import { AddVarRow } from './AddVarRow.js';
import { BulkBar } from './BulkBar.js';
import { EnvSettings, EnvToolbar } from './EnvToolbar.js';
import { ListControls, PAGE_SIZE, Pager, type SortOrder, selectVars, type TypeFilter } from './ListControls.js';
import { MyOverrides, MyValuesNeedWrite } from './MyOverrides.js';
import { useProtectedConfirm } from './protected-confirm.js';
import { usePersonalValues } from './usePersonalValues.js';
import { useVarListing } from './useVarListing.js';
import { type VarDialog, VarDialogs } from './VarDialogs.js';
import { VarsTable } from './VarsTable.js';

/** One environment's variables: toolbar, add form, selection, the table and its dialogs. */
export function EnvPanel({
  project,
  env,
  envs,
  canProtect,
  canAdminister,
  onToggleProtect,
  onToggleApproval,
  onDeleteEnv,
  onColor,
}: {
  project: Project;
  env: Environment;
  envs: Environment[];
  canProtect: boolean;
  /** Project administration: recolour and delete the environment. */
  canAdminister: boolean;
  onToggleProtect: () => void;
  /** D47: turns `requireApproval` on or off (Owners, like protection). */
  onToggleApproval: () => void;
  onDeleteEnv: () => void;
  onColor: (color: string) => void;
}) {
  const toast = useToast();
  const act = useAction();
  // D67: every saved value is validated first; a refusal offers "Save anyway".
  const save = useSaveValidated();
  // A direct write to a protected environment asks first; a change request is reviewed anyway.
  const { guard, dialog: protectedDialog } = useProtectedConfirm(env);
  // Every change and every reveal needs write on this environment (D57): without it, none is offered.
  const writable = canWrite(project, env.name);
  const listing = useVarListing(project.id, env.name, writesNeedApproval(project, env));
  const { vars, loadError, load } = listing;
  // With approval required and no direct write (D47), every edit below joins a change request instead.
  const changeSet = usePendingChanges(project, env, listing);
  // D75: the viewer's own values; they never need approval (the team's value is not changed).
  const personal = usePersonalValues(project, env, load);
  const { pending } = changeSet;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [editing, setEditing] = useState<{ key: string; initial?: string } | null>(null);
  const [dialog, setDialog] = useState<VarDialog | null>(null);
  const [filter, setFilter] = useState('');
  const [typeFilter, setTypeFilter] = useState<TypeFilter>('all');
  const [order, setOrder] = useState<SortOrder>('key');
  const [page, setPage] = useState(0);

  const keys = useMemo(() => new Set((vars ?? []).map((v) => v.key)), [vars]);
  // D49: what `${` completes to and where a shown reference points, for the fields and rows below.
  const refScope = useRefScope(project, env.name, keys);
  // A value is searched only where it is on screen: plain, or revealed (never a masked secret).
  const visible = (v: Variable) => !isMasked(listing.shown(v).value);
  const matching = useMemo(
    () => selectVars(vars ?? [], { query: filter, type: typeFilter, order, shown: listing.shown, visible }),
    [vars, filter, typeFilter, order, listing.plain, listing.revealAll, listing.revealed],
  );
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  // A narrower filter or a shorter listing can leave the page past the end.
  useEffect(() => {
    if (page > pages - 1) setPage(pages - 1);
  }, [page, pages]);
  const pageRows = matching.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  const filtered = filter.trim() !== '' || typeFilter !== 'all';
  const clearFilters = () => {
    setFilter('');
    setTypeFilter('all');
  };
  /** Opens a key's editor, on the page that holds it, with nothing hiding it. */
  const editKey = (key: string, initial?: string) => {
    clearFilters();
    const all = selectVars(vars ?? [], { query: '', type: 'all', order, shown: listing.shown, visible });
    setPage(Math.max(0, Math.floor(all.findIndex((v) => v.key === key) / PAGE_SIZE)));
    personal.open(null);
    setEditing(initial === undefined ? { key } : { key, initial });
  };
  /** Opens the editor of the viewer's own value of a key, the same way. */
  const editMine = (key: string) => {
    clearFilters();
    const all = selectVars(vars ?? [], { query: '', type: 'all', order, shown: listing.shown, visible });
    setPage(Math.max(0, Math.floor(all.findIndex((v) => v.key === key) / PAGE_SIZE)));
    setEditing(null);
    personal.open(key);
  };
  // Opening one's own value from a row or from "My overrides" brings its row into view first.
  const mine = { ...personal, open: (key: string | null) => (key === null ? personal.open(null) : editMine(key)) };
  const copyText = async (key: string, text: string) => {
    await navigator.clipboard.writeText(text);
    toast(`${key} copied`);
  };

  const panel = (
    <section class="panel" aria-label={`Variables of ${env.name}`}>
      <EnvToolbar
        projectId={project.id}
        env={env}
        filter={filter}
        onFilter={(f) => {
          setFilter(f);
          setPage(0);
        }}
        onDeletedKeys={() => setDialog({ kind: 'deleted' })}
        listing={listing}
        canWrite={writable}
        onImport={() => setDialog({ kind: 'import' })}
        canImport={!pending}
      />
      <EnvSettings
        project={project}
        env={env}
        canProtect={canProtect}
        canAdminister={canAdminister}
        onToggleProtect={onToggleProtect}
        onToggleApproval={onToggleApproval}
        onColor={onColor}
        onDeleteEnv={onDeleteEnv}
      />
      {canProtect && <ApprovalNote env={env} />}
      {/* A refused listing means the access changed since the page loaded: its error says what holds now. */}
      {!writable && !loadError && (
        <p class="note" data-testid="read-only-note">
          {readOnlyNote(env.name)}
        </p>
      )}
      {/* D75 needs write, and is not offered in protected environments at all (ADR 0031). */}
      {!writable && !loadError && !env.protected && canRead(project, env.name) && (
        <MyValuesNeedWrite project={project} env={env} />
      )}
      <PendingBar project={project} env={env} state={changeSet} listing={listing} />
      {writable && (
        <AddVarRow
          env={env.name}
          existing={(key) => vars?.find((v) => v.key === key)?.type ?? null}
          onEditExisting={(key, value) => editKey(key, value)}
          onAdd={async (item, overwrite) => {
            if (pending) return pending.set(item);
            await guard(`${overwrite ? 'Overwrite' : 'Add'} ${item.key}`);
            const res = await save((validate) =>
              upsertVars(project.id, { envs: [env.name], items: [item] }, { validate }),
            );
            if (res.created.length) toast(`${item.key} added`);
            else if (overwrite) toast(`${item.key} overwritten; the previous value is in its history`);
            // Not in the listing when the form was sent: someone added it meanwhile, and the upsert replaced it.
            else
              toast(`${item.key} was added by someone else meanwhile and is now overwritten; see its history`, 'error');
            await load();
          }}
        />
      )}
      {writable && selected.size > 0 && (
        <BulkBar
          count={selected.size}
          onDelete={() => setDialog({ kind: 'bulkDelete', keys: [...selected] })}
          onClear={() => setSelected(new Set())}
        />
      )}
      {loadError ? (
        <ErrorBanner error={loadError} onRetry={load} />
      ) : !vars ? (
        <Spinner />
      ) : vars.length === 0 ? (
        writable ? (
          <Empty
            title={`No variables in ${env.name}`}
            action={pending ? null : <Button onClick={() => setDialog({ kind: 'import' })}>Import a .env file</Button>}
          >
            Add one above, or paste a whole .env file.
          </Empty>
        ) : (
          <Empty title={`No variables in ${env.name}`} />
        )
      ) : (
        <>
          <ListControls
            type={typeFilter}
            onType={(t) => {
              setTypeFilter(t);
              setPage(0);
            }}
            order={order}
            onOrder={setOrder}
            matching={matching.length}
            total={vars.length}
          />
          {matching.length === 0 ? (
            <Empty
              title="No variables match"
              action={
                <Button size="sm" onClick={clearFilters}>
                  Clear filters
                </Button>
              }
            >
              {filter.trim()
                ? `No key${listing.plain ? ' or visible value' : ' or plain value'} contains “${filter.trim()}”${typeFilter === 'all' ? '' : ` among ${typeFilter} variables`}.`
                : `No ${typeFilter} variables in ${env.name}.`}
              {filter.trim() && !listing.revealAll ? ' Masked secret values are not searched.' : ''}
            </Empty>
          ) : (
            <VarsTable
              vars={pageRows}
              listing={listing}
              canWrite={writable}
              keys={keys}
              selected={selected}
              onSelected={setSelected}
              selectable={matching}
              editing={editing}
              onEditing={(key) => {
                if (key !== null) personal.open(null);
                setEditing(key === null ? null : { key });
              }}
              onCopy={(v) =>
                act(async () => {
                  const value = listing.shown(v).value;
                  if (!isMasked(value)) return copyText(v.key, value);
                  setDialog({ kind: 'copy', v });
                })
              }
              onSave={async (key, body) => {
                if (pending) await pending.update(key, body);
                else
                  await guard(`Save ${key}`).then(() =>
                    save((validate) => updateVar(project.id, env.name, key, body, { validate })),
                  );
                setEditing(null);
                if (!pending) toast(`${key} saved`);
                await load();
              }}
              onToggleType={(v) =>
                // Making a secret plain exposes its value in every masked listing: it asks first.
                v.type === 'secret'
                  ? setDialog({ kind: 'makePlain', key: v.key })
                  : act(async () => {
                      if (pending) return pending.update(v.key, { type: 'secret' });
                      await guard(`Make ${v.key} secret`);
                      await updateVar(project.id, env.name, v.key, { type: 'secret' });
                      toast(`${v.key} is now secret`);
                      await load();
                    })
              }
              onHistory={(key) => setDialog({ kind: 'history', key })}
              onDelete={(key) => setDialog({ kind: 'delete', key })}
              personal={mine}
              env={env.name}
            />
          )}
          <Pager page={Math.min(page, pages - 1)} pages={pages} onPage={setPage} />
          {filtered && matching.length > 0 && (
            <p class="muted small">
              Filtered: {matching.length} of {vars.length} shown.{' '}
              <button type="button" class="linklike" onClick={clearFilters}>
                Show all
              </button>
            </p>
          )}
        </>
      )}
      {!loadError && vars && <MyOverrides env={env} personal={mine} keys={keys} />}
      <PendingCtx.Provider value={pending}>
        <VarDialogs
          dialog={dialog}
          project={project}
          env={env.name}
          isProtected={env.protected}
          envs={envs}
          canWrite={writable}
          onClose={() => setDialog(null)}
          onChanged={load}
          onBulkDeleted={() => setSelected(new Set())}
          onHistory={(key) => setDialog({ kind: 'history', key })}
          onCopy={async (v) => {
            const text = await listing.plaintextOf(v.key);
            if (text !== null) await copyText(v.key, text);
          }}
        />
      </PendingCtx.Provider>
      {protectedDialog}
    </section>
  );
  return <RefScope.Provider value={refScope}>{panel}</RefScope.Provider>;
}
