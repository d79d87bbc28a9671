/** Usage text for `gateway help`, no arguments, and mistakes on the command line. */
export const usageText = `Usage: gateway <command> [options]

Commands:
  start                       Run the gateway server
  keys create                 Mint an API key (the full key is shown once)
      --name <name>             Label shown in lists (default "unnamed")
      --scopes <list>           Comma-separated: inference, fix (default inference)
      --models <list>           Comma-separated aliases or model ids, e.g. svc/fast,sim/sage
                                (default: every model)
      --daily-limit <usd>       Most the key may spend per UTC day, e.g. 5 or 0.25
      --rate-limit <n>          Requests per minute (default: the configured default)
      --expires <when>          ISO date (2026-12-31, 2026-12-31T18:00:00Z) or a duration
                                from now: 90m, 12h, 30d, 2w
  keys list                   List keys with their status
  keys revoke <id-or-prefix>  Revoke a key by its id (key_...) or prefix (svc_...)
  funds add <usd>             Add funds to the account, e.g. funds add 20 --note "invoice 7"
      --note <text>             Reason kept in the ledger and audit log
  funds show                  Show the balance
  budget set <usd>            Monthly budget of the account (charges plus holds, per UTC month)
  budget clear                Remove the monthly budget
  budget show                 This month's spend, holds and budget
  models                      What the config's models resolve to: prices, context window,
                                output limit, capabilities, each from the catalog or the config
  migrate                     Create or upgrade the database schema
  help                        Show this text

Global options:
  --config <path>             Config file (else $GATEWAY_CONFIG, else the built-in demo config)
  --json                      Machine-readable output
  -h, --help                  Show this text

Environment: DATABASE_PATH, PORT and HOST override the config file.
`;
