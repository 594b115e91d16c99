import { cachedRows } from '../../db/epoch-cache.js';
import { notFound } from '../../lib/errors.js';
import type { Ctx } from '../core/context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * D58: a project path segment is its id or its slug (D48), never ambiguous: a slug cannot be uuid-shaped.
 * A slug is looked up in the caller's workspace only, so another workspace's slug is 404 like any project
 * the caller cannot see (D23). Ids pass through untouched (the pull hot path pays one regex test).
 */
export async function projectIdOf(ctx: Ctx, ref: string): Promise<string> {
  // An id, or something neither id nor slug (left for the route's validation: 400 naming `id`).
  if (UUID.test(ref) || !SLUG.test(ref)) return ref;
  const { db } = ctx.deps;
  const workspaceId = ctx.principal.workspaceId;
  const [row] = await cachedRows(
    db,
    `slug|${workspaceId}|${ref}`,
    () =>
      db.selectFrom('projects').select('id').where('workspace_id', '=', workspaceId).where('slug', '=', ref).execute(),
    ctx.epoch,
  );
  if (!row) throw notFound('project');
  return row.id;
}
