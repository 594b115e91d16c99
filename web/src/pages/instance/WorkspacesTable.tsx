import type { AdminWorkspace, PlanName } from '@svcenv/contract';
import { setWorkspacePlan } from '../../api/admin.js';
import { Table } from '../../components/Table.js';
import { dateOnly } from '../../lib/format.js';
import { useAction, useToast } from '../../toast.js';

/** D15's plans, as the selector offers them. */
const PLANS: { name: PlanName; label: string }[] = [
  { name: 'free', label: 'Free (3 projects, 3 members, 3 envs)' },
  { name: 'team', label: 'Team (20 projects, 25 members, 10 envs)' },
  { name: 'enterprise', label: 'Enterprise (unlimited)' },
];

/** Every workspace of the instance with its plan, which an administrator changes in place. */
export function WorkspacesTable({
  workspaces,
  onChanged,
}: {
  workspaces: AdminWorkspace[];
  onChanged: () => Promise<void>;
}) {
  const act = useAction();
  const toast = useToast();
  return (
    <Table
      class="table-cards"
      columns={['Workspace', 'Plan', 'Members', 'Projects', 'Created']}
      testId="instance-workspaces"
    >
      {workspaces.map((w) => (
        <tr key={w.id} data-testid={`workspace-${w.slug}`}>
          <td class="cell-head">
            <div>{w.name}</div>
            <code class="muted small">{w.slug}</code>
          </td>
          <td data-label="Plan">
            <select
              class="input input-sm plan-select"
              aria-label={`Plan of ${w.name}`}
              value={w.plan}
              onChange={(e) => {
                const plan = e.currentTarget.value as PlanName;
                void act(async () => {
                  await setWorkspacePlan(w.id, plan);
                  toast(`${w.name} is now on the ${plan} plan`);
                  await onChanged();
                });
              }}
            >
              {PLANS.map((p) => (
                <option key={p.name} value={p.name}>
                  {p.label}
                </option>
              ))}
            </select>
          </td>
          <td data-label="Members">{w.members}</td>
          <td data-label="Projects">{w.projects}</td>
          <td class="small" data-label="Created">
            {dateOnly(w.createdAt)}
          </td>
        </tr>
      ))}
    </Table>
  );
}
