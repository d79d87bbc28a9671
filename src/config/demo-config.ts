/**
 * Built-in config used when no file is given: every model is served by the simulated
 * provider, so the gateway answers offline. Prices mirror real models so receipts look real.
 */
export const demoConfigText = `
server:
  host: 127.0.0.1
  port: 8787
database:
  path: ./data/gateway.db
providers:
  - id: sim
    kind: simulated
    simulated:
      latency_ms: 150
      tokens_per_second: 120
      script:
        - match: weather
          tool_call: { name: get_weather, arguments: { city: Paris } }
        # Plays a fix model for the README's fix walk-through: a broken edit first, then a good one.
        - match: "return a - b;"
          replies:
            - |
              add() subtracts its arguments instead of adding them.

              src/add.js
              \`\`\`
              <<<<<<< SEARCH
                return a-b;
              =======
                return a + b;
              >>>>>>> REPLACE
              \`\`\`
            - |
              add() subtracts its arguments instead of adding them; it must return their sum.

              src/add.js
              \`\`\`
              <<<<<<< SEARCH
                return a - b;
              =======
                return a + b;
              >>>>>>> REPLACE
              \`\`\`
models:
  - id: sim/swift-mini
    provider: sim
    price: { input: "0.15", cached_input: "0.075", output: "0.60" }
    context_window: 128000
    max_output_tokens: 16384
    capabilities: { tools: true, vision: true, reasoning: false }
  - id: sim/steady
    provider: sim
    price: { input: "1.10", cached_input: "0.55", output: "4.40" }
    context_window: 200000
    max_output_tokens: 32000
    capabilities: { tools: true, vision: true, reasoning: true }
  - id: sim/sage
    provider: sim
    price: { input: "3.00", cached_input: "0.30", cache_write: "3.75", output: "15.00" }
    context_window: 200000
    max_output_tokens: 64000
    capabilities: { tools: true, vision: true, reasoning: true }
aliases:
  svc/fast: { candidates: [sim/swift-mini, sim/steady], reasoning: low }
  svc/balanced: { candidates: [sim/steady, sim/sage], reasoning: medium }
  svc/best: { candidates: [sim/sage, sim/steady], reasoning: xhigh }
# What Claude Code and Codex send when no model is set for them.
model_rules:
  - { match: "claude-*", to: svc/balanced }
  - { match: "gpt-*", to: svc/best }
`;
