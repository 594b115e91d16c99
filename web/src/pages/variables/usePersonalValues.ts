import type { Environment, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { deleteOverride, listOverrides, type Override, putOverride } from '../../api/variables.js';
import { useAsync } from '../../hooks.js';
import { canWrite } from '../../lib/access.js';
import { useAction, useToast } from '../../toast.js';

export type PersonalValues = ReturnType<typeof usePersonalValues>;

/**
 * D75 (ADR 0031): the viewer's own values of keys in one environment. `available`: they may set them here
 * (write, and the environment is not protected; the server refuses both otherwise). Their overrides are listed
 * in every environment they can read, masked, so ones left in an environment protected since (never applied)
 * can still be seen and removed. After a set or a remove the listing is loaded again (`reloadListing`), so each
 * row shows what the viewer now gets and its marker.
 */
export function usePersonalValues(project: Project, env: Environment, reloadListing: () => Promise<void>) {
  const toast = useToast();
  const act = useAction();
  const writable = canWrite(project, env.name);
  const available = writable && !env.protected;
  const list = useAsync(() => listOverrides(project.id, env.name).then((r) => r.overrides), [project.id, env.name]);
  // The key whose own value is open in its row's editor.
  const [editing, setEditing] = useState<string | null>(null);
  const refresh = () => Promise.all([reloadListing(), list.reload()]);
  return {
    available,
    /** Deleting needs write only: an environment protected after a value was set still lets it go. */
    removable: writable,
    overrides: list.data as Override[] | undefined,
    error: list.error,
    reload: list.reload,
    editing,
    open: (key: string | null) => setEditing(key),
    /** The viewer's current value of `key` in plain text (reveal needs write, which setting needed too). */
    current: async (key: string): Promise<string | null> =>
      (await listOverrides(project.id, env.name, true)).overrides.find((o) => o.key === key)?.value ?? null,
    /** Throws what the server answered (a 422 UNRESOLVED_REFERENCES saves nothing): the editor shows it. */
    save: async (key: string, value: string) => {
      await putOverride(project.id, env.name, key, value);
      setEditing(null);
      toast(`Your value of ${key} is saved: only you see it, the team's value is unchanged`);
      await refresh();
    },
    /** `orphaned`: the environment has no such key any more, so there is no team value to go back to. */
    remove: (key: string, orphaned = false) =>
      act(async () => {
        await deleteOverride(project.id, env.name, key);
        if (editing === key) setEditing(null);
        toast(
          orphaned
            ? `Your value of ${key} is removed`
            : `Your value of ${key} is removed: you get the team's value again`,
        );
        await refresh();
      }),
  };
}
