import { z } from 'zod';

/** D6: the database answers. */
export const healthResponse = z.object({ ok: z.literal(true) });
/** D52: the instance takes requests (it is not draining). */
export const readyResponse = z.object({ ready: z.literal(true) });
