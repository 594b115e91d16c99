/**
 * Shapes of endpoints that are specified (D12, D35) but whose contract schemas are not on main yet
 * (account security and webhooks are being built in parallel). Replace each with the contract's type
 * once it lands; they follow the decisions page field for field.
 */
export interface MyWorkspace {
  id: string;
  name: string;
  slug: string;
  wsRole: 'Owner' | 'Member';
}
export interface MfaSetup {
  secret: string;
  otpauthUrl: string;
}
export interface BackupCodes {
  backupCodes: string[];
}

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
