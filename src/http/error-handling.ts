import { maxHeaderSize, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { renderAnthropicError, renderOpenAIError } from '../errors/render-error.ts';
import { newRequestIds } from '../lib/ids.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { routeOptions, type WireFormat } from './request-context.ts';

/** Fastify's own errors (bad JSON, body too large...) in the contract's terms. */
function fromFastify(error: FastifyError, bodyLimit: number): GatewayError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_request', 'The body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError(
        'invalid_request',
        `The body is larger than the gateway accepts (${bodyLimit} bytes; server.body_limit_bytes).`,
        {},
        null,
        413,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('invalid_request', 'Send the body as JSON with Content-Type: application/json.');
  }
  if (error instanceof SyntaxError) return new GatewayError('invalid_request', 'The body is not valid JSON.');
  return null;
}

/** What Node's HTTP parser could not read, in the contract's terms; HTTP's own status where it has a precise one. */
function fromClientError(error: NodeJS.ErrnoException): GatewayError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new GatewayError('invalid_request', `The request headers are larger than the gateway accepts (${maxHeaderSize} bytes).`, {}, null, 431);
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new GatewayError('invalid_request', 'The request did not arrive in time.', {}, null, 408);
  return new GatewayError('invalid_request', 'The request is not valid HTTP/1.1 (request line, headers or body framing).');
}

/**
 * Requests broken below HTTP (a bad request line, header or framing; headers too large) never
 * reach a route: answer them with the envelope and a request id, then close the connection,
 * as Node does, instead of the framework's own body. Like Node, nothing is written into an
 * answer already under way on the connection (a pipelined request's stream).
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Node's own clientError default reads the same field: the response the socket is writing.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const { requestId } = newRequestIds();
    const gatewayError = fromClientError(error);
    const body = JSON.stringify(renderOpenAIError(gatewayError, requestId));
    socket.write(
      `HTTP/1.1 ${gatewayError.status} ${STATUS_CODES[gatewayError.status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-svc-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** A request's path as an error message shows it: no query, a gateway key pasted into it hidden. */
export function pathInMessage(url: string): string {
  return url.split('?')[0]!.replace(/svc_[A-Za-z0-9_-]+/g, 'svc_[redacted]');
}

/** The route's format; on a route without one (models, unknown paths), Anthropic clients are known by their version header. */
function errorWire(request: FastifyRequest): WireFormat {
  return routeOptions(request).wire ?? (request.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai');
}

/** The error body the client's SDK parses, and the headers it needs to retry exactly what is retryable. */
function renderError(request: FastifyRequest, reply: FastifyReply, error: GatewayError): unknown {
  if (errorWire(request) !== 'anthropic') return renderOpenAIError(error, request.requestId);
  // Anthropic's SDKs (Claude Code's too) retry every 5xx unless this header says otherwise.
  reply.header('x-should-retry', String(error.retryable));
  return renderAnthropicError(error, request.requestId);
}

/** A URL the router cannot read (a bad escape, an overlong segment): the envelope of the client's format, with a request id. */
export function answerUnreadableUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { requestId } = newRequestIds();
  request.requestId = requestId;
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment of this URL is too long.' : 'The URL is not valid (check its percent-escapes).';
  reply
    .header('x-svc-request-id', requestId)
    .code(400)
    .send(renderError(request, reply, new GatewayError('invalid_request', message)));
}

/** Sends the error envelope, unless the reply has already begun (a stream ends with its own error event) or its client is gone. */
export function sendErrorBody(request: FastifyRequest, reply: FastifyReply, error: GatewayError): void {
  if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return;
  const body = renderError(request, reply, error);
  reply.code(error.status).headers(error.headers).send(body);
}

/** Any error of a request, in the contract's terms: the error it answers with. */
export function asGatewayError(raw: Error, bodyLimit: number): GatewayError {
  return raw instanceof GatewayError ? raw : (fromFastify(raw as FastifyError, bodyLimit) ?? toGatewayError(raw));
}

/** Every failure leaves as the one envelope; nothing internal (stack, provider secret) reaches the client. */
export function installErrorHandling(app: FastifyInstance, deps: GatewayDeps): void {
  app.setErrorHandler(async (raw: FastifyError, request, reply) => {
    const error = asGatewayError(raw, deps.config.server.body_limit_bytes);
    if (error.code === 'internal_error') request.log.error({ err: raw, requestId: request.requestId }, 'unexpected error');
    // A model request ends through its lifecycle: the receipt first, then the envelope.
    if (request.lifecycle) await request.lifecycle.fail(error);
    else sendErrorBody(request, reply, error);
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new GatewayError('not_found', `No route ${request.method} ${pathInMessage(request.url)}.`);
    reply.code(404).send(renderError(request, reply, error));
  });
}
