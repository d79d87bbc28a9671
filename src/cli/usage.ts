/** Usage text for `gateway help`, no arguments, and mistakes on the command line. */
export const usageText = `Usage: gateway <command> [options]

Commands:
  start                       Run the gateway server; a provider whose key variable is unset is
                                skipped with a warning (an error if it is an alias's only candidate)
      --port <n>                Port to listen on, over the config and PORT (0: any free port)
      --host <h>                Address to listen on, over the config and HOST
  check-config                Validate the config as start would, opening no database; exit 2 on errors
  reload                      Make the running gateway re-read its config (SIGHUP to the pid in
                                gateway-<port>.pid beside database.path); exit 1 if it refused it
      --port <n>                The port it listens on (default: the config's)
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
  receipts                    Receipts, newest first (id, UTC time, key, models, status, cost, tokens)
      --key <id|prefix>         Of one key
      --model <id>              Requested or answering model
      --status <s>              succeeded, failed or cancelled
      --since <when>            From this date, UTC time or duration ago (2026-01-31, 2026-01-31T18:00, 7d)
      --until <when>            Before this one
      --limit <n>               How many (default 20)
      --csv                     CSV with a header row (or --json)
  usage                       Spend, requests, errors and tokens per group
      --by <group>              key (default), model or day (UTC)
      --since, --until <when>   The range (default: the last 30 days), --csv or --json
  members list                Console members, owner first
  members add <address>       Add a member; --role owner only while the workspace has no owner
  members remove <address>    Remove a member and end its console sessions
  setup claude-code           Mint a key for Claude Code and print its settings (base URL, key,
                              model, context window and output limit of the model)
      --write                   Merge them into its settings file instead of printing them
      --scope <where>           user ($CLAUDE_CONFIG_DIR or ~/.claude/settings.json, default),
                                project (.claude/settings.json), local (.claude/settings.local.json)
  setup codex                 Mint a key for Codex and print its config.toml provider and model
      --write                   Write them, the key (.env) and the model's metadata (a model
                                catalog) into $CODEX_HOME or ~/.codex
      --built-in                Codex's built-in OpenAI provider instead (openai_base_url: the
                                Responses WebSocket, remote compaction); --write stores the key
                                with codex login --with-api-key, replacing Codex's stored login
      --model <alias-or-id>     Either setup: the model the tool uses (default svc/balanced)
      --url <url>               Either setup: the gateway's address as the tool reaches it
                                (default: server.host and server.port of the config)
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
