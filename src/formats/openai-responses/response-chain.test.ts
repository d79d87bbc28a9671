import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../errors/gateway-error.ts';
import { ResponseChain } from './response-chain.ts';

const user = (text: string) => ({ type: 'message', role: 'user', content: text });

test('a frame naming an earlier response gets its whole conversation before its own items, without the frame’s own fields', () => {
  const chain = new ResponseChain();
  chain.remember('resp_1', 'first question', [{ type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}' }]);
  const body = chain.resolve({
    type: 'response.create',
    generate: true,
    previous_response_id: 'resp_1',
    model: 'm',
    input: [{ type: 'function_call_output', call_id: 'c1', output: 'a.txt' }],
  });
  assert.deepEqual(body, {
    model: 'm',
    input: [
      user('first question'),
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a.txt' },
    ],
  });
  assert.deepEqual(
    chain.resolve({ type: 'response.create', model: 'm', input: 'alone' }),
    { model: 'm', input: 'alone' },
    'no previous response: as sent',
  );
});

test('an unknown or forgotten response is invalid_request on previous_response_id; the last eight are kept', () => {
  const chain = new ResponseChain();
  for (let index = 1; index <= 9; index++) chain.remember(`resp_${index}`, [user(String(index))], []);
  const refused = (id: unknown) =>
    assert.throws(
      () => chain.resolve({ model: 'm', input: [], previous_response_id: id }),
      (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request' && error.param === 'previous_response_id',
    );
  refused('resp_1');
  refused('resp_unknown');
  refused(42);
  assert.deepEqual(chain.resolve({ model: 'm', input: [], previous_response_id: 'resp_2' }).input, [user('2')]);
});
