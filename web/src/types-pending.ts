/**
 * Shapes of the webhook endpoints (D35), whose contract schemas are not on main yet (the events work is
 * being built in parallel). Replace them with the contract's types once it lands; they follow D35 and the
 * events branch's contract field for field.
 */
export const WEBHOOK_EVENTS = [
  'var.update',
  'var.delete',
  'var.restore',
  'vars.bulk_upsert',
  'vars.bulk_delete',
  'vars.pull',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface Webhook {
  id: string;
  name: string;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  lastFiredAt: string | null;
  lastStatus: number | null;
  createdAt: string;
}
export interface CreatedWebhook {
  id: string;
  name: string;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  secret: string;
}
export interface WebhookDelivery {
  id: string;
  event: string;
  attempt: number;
  status: number;
  durationMs: number;
  error: string | null;
  createdAt: string;
}
