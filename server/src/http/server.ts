import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type FastifyServerOptions, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import { type Config, isTrustedProxy, proxyList } from '../config.js';
import { loggablePath } from '../lib/redact.js';
import { BODY_LIMIT } from './body.js';
import { CoalescedResponse } from './coalesced-response.js';
import { clientErrorHandler, frameworkErrorHandler } from './errors.js';

export interface Tls {
  cert: Buffer;
  key: Buffer;
  minVersion: 'TLSv1.2';
  requireHostHeader: false;
}

/** The certificate and key when the server terminates TLS itself (TLS_CERT_FILE), else null. */
export function tlsOptions(config: Config): Tls | null {
  return config.TLS_CERT_FILE
    ? {
        cert: readFileSync(config.TLS_CERT_FILE),
        key: readFileSync(config.TLS_KEY_FILE!),
        minVersion: 'TLSv1.2',
        requireHostHeader: false,
      }
    : null;
}

/**
 * D4/D14: trust exactly one hop, the TLS-terminating proxy we are connected to: with TRUSTED_PROXIES only
 * when the peer is one of those addresses, else whoever the peer is.
 */
function trustFirstHop(trusted: string | undefined): (address: string, hop: number) => boolean {
  if (!trusted) return (_address, hop) => hop === 0;
  const list = proxyList(trusted);
  return (address, hop) => hop === 0 && isTrustedProxy(list, address);
}

/** Fastify's own settings: TLS, logging without secrets, proxies, body size, errors before routing. */
export function serverOptions(
  config: Config,
  https: Tls | null,
  logStream: DestinationStream | undefined,
): FastifyServerOptions {
  return {
    // Node would refuse an HTTP/1.1 request without Host itself, with an empty body and none of our headers;
    // the onRequest hook (http/hooks.ts) refuses it in our shape instead.
    ...(https
      ? { https: { ...https, ServerResponse: CoalescedResponse } }
      : { http: { requireHostHeader: false, ServerResponse: CoalescedResponse } }),
    logger: {
      level: config.LOG_LEVEL,
      ...(logStream ? { stream: logStream } : {}),
      // Requests are logged without bodies, headers or query strings (which could carry values or tokens).
      serializers: {
        req: (req) => ({ method: req.method, path: loggablePath(req.url), remoteAddress: req.ip }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    },
    // One line per request is written by the onResponse hook (http/hooks.ts), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    // D4/D14: trust exactly one hop, the TLS-terminating proxy we are connected to, so the client address is
    // the X-Forwarded-For entry that proxy appended; `true` would take the left-most entry, which the client
    // writes itself and could change on every request to escape the login rate limit.
    trustProxy: config.TRUST_PROXY ? trustFirstHop(config.TRUSTED_PROXIES) : false,
    bodyLimit: BODY_LIMIT,
    // Requests that arrive while the server drains get a 503 from the onRequest hook, in our shape.
    return503OnClosing: false,
    // Errors Fastify or Node answer before our routes run get the spec's error shape too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
  };
}
