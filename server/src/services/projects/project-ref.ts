import { cachedRows } from '../../db/epoch-cache.js';
import { notFound } from '../../lib/errors.js';
import { accessRowKeys } from '../core/authz.js';
import type { Ctx } from '../core/context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** D58: whether a project path segment is an id, a slug, or neither (left for the route's validation). */
export function projectRefKind(ref: string): 'id' | 'slug' | null {
  if (UUID.test(ref)) return 'id';
  return SLUG.test(ref) ? 'slug' : null;
}

/**
 * D58: a project path segment is its id or its slug (D48), never ambiguous: a slug cannot be uuid-shaped.
 * A slug is looked up in the caller's workspace only, so another workspace's slug is 404 like any project
 * the caller cannot see (D23). Ids pass through untouched (the pull hot path pays one regex test).
 */
export async function projectIdOf(ctx: Ctx, ref: string): Promise<string> {
  // An id, or something neither id nor slug (left for the route's validation: 400 naming `id`).
  if (projectRefKind(ref) !== 'slug') return ref;
  return projectIdOfSlug(ctx, ref);
}

/**
 * The id of the project with this slug in the caller's workspace (404 otherwise), for a caller that already
 * knows `ref` is slug-shaped (the request hook, http/hooks.ts, which leaves ids without a promise).
 */
export async function projectIdOfSlug(ctx: Ctx, ref: string): Promise<string> {
  const { db } = ctx.deps;
  const workspaceId = ctx.principal.workspaceId;
  // A pull or export by slug read the id with its credential (ctx.snapshot, services/identity/authn.ts).
  const [row] = await cachedRows(
    db,
    accessRowKeys.slug(workspaceId, ref),
    () =>
      db.selectFrom('projects').select('id').where('workspace_id', '=', workspaceId).where('slug', '=', ref).execute(),
    ctx.epoch,
    ctx.snapshot,
  );
  if (!row) throw notFound('project');
  return row.id;
}
