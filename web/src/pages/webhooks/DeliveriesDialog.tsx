import type { Webhook } from '@svcenv/contract';
import { listDeliveries } from '../../api/webhooks.js';
import { Table } from '../../components/Table.js';
import { useAsync } from '../../hooks.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { Button, Empty, ErrorBanner, Modal, Pill, Spinner } from '../../ui.js';
import { statusTone } from './status.js';

/** A webhook's recent deliveries (attempts included), refreshed on demand. */
export function DeliveriesDialog({ hook, onClose }: { hook: Webhook; onClose: () => void }) {
  const deliveries = useAsync(() => listDeliveries(hook.id).then((r) => r.deliveries), [hook.id]);
  const list = deliveries.data;
  return (
    <Modal
      title={`Deliveries of ${hook.name}`}
      onClose={onClose}
      wide
      footer={<Button onClick={deliveries.reload}>Refresh</Button>}
    >
      {deliveries.error ? (
        <ErrorBanner error={deliveries.error} />
      ) : !list ? (
        <Spinner />
      ) : list.length === 0 ? (
        <Empty title="No deliveries yet">Send a test ping or change a variable.</Empty>
      ) : (
        <Table testId="deliveries" columns={['Event', 'Status', 'Attempt', 'Duration', 'Time']}>
          {list.map((d) => (
            <tr key={`${d.id}-${d.attempt}`}>
              <td>
                <code>{d.event}</code>
              </td>
              <td>
                <Pill tone={statusTone(d.status)}>{d.status === 0 ? (d.error ?? 'no response') : d.status}</Pill>
              </td>
              <td>{d.attempt}</td>
              <td>{d.durationMs} ms</td>
              <td class="small" title={dateTime(d.createdAt)}>
                {relativeTime(d.createdAt)}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Modal>
  );
}
