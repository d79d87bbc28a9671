/** Why a sign-in was refused; stable codes the HTTP layer can branch on. */
export type SignInRefusal =
  | 'malformed'
  | 'wrong_domain'
  | 'wrong_uri'
  | 'wrong_chain'
  | 'unknown_nonce'
  | 'expired'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'too_long'
  | 'bad_signature'
  | 'rpc_unavailable';

/** A refused sign-in; `message` is a sentence a person understands. */
export class SignInError extends Error {
  override readonly name = 'SignInError';

  constructor(
    readonly reason: SignInRefusal,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
