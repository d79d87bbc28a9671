import { createHash } from 'node:crypto';
import { WINDOW_MS } from './gcra.ts';

/**
 * `stepGcra` (gcra.ts) as one Redis Lua script, line for line, so every process shares one
 * atomic state per subject. Lua numbers are doubles like JavaScript's, and every value stays an
 * integer below 2^53 (MAX_PER_MINUTE keeps `remainder * perMinute` under 10^12), so both
 * compute the same decisions bit for bit; the contract suite checks it against a BigInt model.
 *
 * KEYS[1]  the subject's hash: tatMs, remainder, perMinute (the TAT is tatMs + remainder / perMinute ms)
 * ARGV[1]  perMinute, an integer in 1..MAX_PER_MINUTE (checked by the caller)
 * ARGV[2]  now in ms, or '' for the Redis server's clock (so hosts with skewed clocks agree)
 *
 * Returns { 1, 0 } when allowed, { 0, retryAfterSeconds } when refused. A refusal writes nothing.
 *
 * The state expires one window after it goes idle: an idle state decides exactly like no state,
 * so expiring late is harmless, while expiring early (a clock step, or a caller-supplied instant
 * that runs slower than the server's clock) would forget requests that still count.
 */
export const GCRA_SCRIPT = `
local WINDOW_MS = ${WINDOW_MS}
local perMinute = tonumber(ARGV[1])
local nowMs
if ARGV[2] == '' then
  local time = redis.call('TIME')
  nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  nowMs = tonumber(ARGV[2])
end

local function ceilDivide(a, b)
  local quotient = math.floor(a / b)
  if quotient * b < a then return quotient + 1 end
  return quotient
end

-- rescale: the TAT in 1/perMinute ms, rounded up (see gcra.ts)
local tatMs, remainder
local saved = redis.call('HMGET', KEYS[1], 'tatMs', 'remainder', 'perMinute')
if saved[1] and saved[2] and saved[3] then
  tatMs = tonumber(saved[1])
  remainder = tonumber(saved[2])
  local savedPerMinute = tonumber(saved[3])
  if savedPerMinute ~= perMinute then
    remainder = ceilDivide(remainder * perMinute, savedPerMinute)
    if remainder == perMinute then
      tatMs = tatMs + 1
      remainder = 0
    end
  end
end

-- a TAT in the past means an idle subject: start from now
if tatMs == nil or tatMs < nowMs then
  tatMs = nowMs
  remainder = 0
end
local units = remainder + WINDOW_MS
local nextTatMs = tatMs + math.floor(units / perMinute)
local nextRemainder = units % perMinute
local ceilTatMs = nextTatMs
if nextRemainder > 0 then ceilTatMs = ceilTatMs + 1 end
local waitMs = ceilTatMs - WINDOW_MS - nowMs

local result
if waitMs <= 0 then
  -- '%.0f' writes every integer below 2^53 exactly (tostring would switch to exponents)
  redis.call('HSET', KEYS[1],
    'tatMs', string.format('%.0f', nextTatMs),
    'remainder', string.format('%.0f', nextRemainder),
    'perMinute', string.format('%.0f', perMinute))
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', ceilTatMs - nowMs + WINDOW_MS))
  result = { 1, 0 }
else
  result = { 0, math.ceil(waitMs / 1000) }
end
return result
`;

/** The script's SHA-1, as EVALSHA wants it. */
export const GCRA_SCRIPT_SHA = createHash('sha1').update(GCRA_SCRIPT).digest('hex');
