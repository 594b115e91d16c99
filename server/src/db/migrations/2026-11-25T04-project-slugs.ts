import type { Kysely } from 'kysely';

/**
 * D48: projects get a `slug`, unique within their workspace, derived from the name by the D28 rule (lower
 * case, every run of characters outside [a-z0-9] one `-`, trimmed, at most 63 characters), with `-2`,
 * `-3`, ... on a collision. Existing projects get theirs here, oldest first. Frozen in time: Kysely<any>,
 * no app imports (guide convention 13), so the rule is written out again here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('slug', 'text').execute();
  const rows = await db
    .selectFrom('projects')
    .select(['id', 'workspace_id', 'name'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const taken = new Map<string, Set<string>>();
  for (const r of rows as { id: string; workspace_id: string; name: string }[]) {
    const used = taken.get(r.workspace_id) ?? new Set<string>();
    taken.set(r.workspace_id, used);
    const base =
      r.name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 63)
        .replace(/-+$/, '') || 'project';
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base.slice(0, 63 - String(n).length - 1).replace(/-+$/, '')}-${n}`;
    used.add(slug);
    await db.updateTable('projects').set({ slug }).where('id', '=', r.id).execute();
  }
  await db.schema
    .createIndex('projects_workspace_slug')
    .unique()
    .on('projects')
    .columns(['workspace_id', 'slug'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('projects_workspace_slug').execute();
  await db.schema.alterTable('projects').dropColumn('slug').execute();
}
