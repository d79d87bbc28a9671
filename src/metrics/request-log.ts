import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatUsd } from '../lib/money.ts';
import type { ReceiptRecord } from '../storage/records.ts';

/**
 * The one log line of a request (info level, message "request"). A model request's line is its
 * receipt in short; another request's line says what was asked and answered. Only a key's
 * public prefix appears, never a key, a prompt or a provider secret.
 */
export function receiptLogLine(receipt: ReceiptRecord) {
  return {
    request_id: receipt.requestId,
    receipt_id: receipt.id,
    key_prefix: receipt.keyPrefix,
    endpoint: receipt.endpoint,
    stream: receipt.stream,
    requested_model: receipt.requestedModel,
    model: receipt.answeringModel,
    status: receipt.status,
    error_code: receipt.errorCode,
    cost: formatUsd(receipt.costNano),
    duration_ms: receipt.latencyMs,
    ttft_ms: receipt.timeToFirstTokenMs,
  };
}

export function responseLogLine(request: FastifyRequest, reply: FastifyReply) {
  return {
    request_id: request.requestId,
    key_prefix: request.apiKey?.prefix ?? null,
    method: request.method,
    route: request.routeOptions.url ?? null,
    status: reply.statusCode,
    duration_ms: Math.round(reply.elapsedTime),
  };
}
