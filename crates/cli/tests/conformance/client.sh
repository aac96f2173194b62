#!/usr/bin/env bash
# tackle's real CLI as the client of the MCP conformance suite (`conformance client --command`).
#
# The suite starts a test server for a scenario, appends its URL as this script's last argument
# and names the scenario in MCP_CONFORMANCE_SCENARIO. The script registers that URL as a user
# scope HTTP server in a private, temporary HOME and XDG_CONFIG_HOME (never the developer's
# own), then drives the CLI as a user would: `tackle mcp get` (initialize and tools/list) and
# `tackle call mcp__conformance__<tool>` for the scenarios that call a tool; for `auth/*`,
# `tackle mcp login` with a redirect-following fetcher as $BROWSER first.
#
# TACKLE names the tackle binary (crates/cli/tests/conformance.rs sets it).
set -euo pipefail

url="${!#}"
scenario="${MCP_CONFORMANCE_SCENARIO:?the conformance suite sets MCP_CONFORMANCE_SCENARIO}"
tackle="${TACKLE:?set TACKLE to the tackle binary}"

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME="$home" XDG_CONFIG_HOME="$home/config" TACKLE_HEADLESS=1
mkdir -p "$home/project/.agents" "$XDG_CONFIG_HOME"
cd "$home/project"

name=conformance
# A call of the scenario's tool, allowed for this run alone, after listing the server's tools.
call() {
  "$tackle" mcp get "$name" --json
  "$tackle" --allow "tool.mcp.${name}.$1" call "mcp__${name}__$1" "$2"
}
case "$scenario" in
  auth/pre-registration)
    # The suite hands the pre-registered client in MCP_CONFORMANCE_CONTEXT; the secret travels
    # in an environment variable, as a user keeps it.
    context() { printf '%s' "$MCP_CONFORMANCE_CONTEXT" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
    CONFORMANCE_CLIENT_SECRET=$(context client_secret)
    export CONFORMANCE_CLIENT_SECRET
    "$tackle" mcp add --transport http "$name" "$url" \
      --client-id "$(context client_id)" --client-secret-env CONFORMANCE_CLIENT_SECRET
    ;;
  auth/basic-cimd)
    # The client ID metadata document URL the suite's authorization server expects (it does not
    # fetch it), configured as a user who hosts one for tackle would.
    "$tackle" mcp add --transport http "$name" "$url" \
      --client-metadata-url https://conformance-test.local/client-metadata.json
    ;;
  *)
    "$tackle" mcp add --transport http "$name" "$url"
    ;;
esac

case "$scenario" in
  auth/*)
    # The suite's authorization endpoint redirects at once with a code: the "browser" only has
    # to follow that redirect to tackle's loopback callback.
    browser="$home/browser"
    printf '#!/bin/sh\nexec curl -fsS -L -o /dev/null "$1"\n' >"$browser"
    chmod +x "$browser"
    export BROWSER="$browser"
    "$tackle" mcp login "$name"
    "$tackle" mcp get "$name" --json
    if [ "$scenario" = auth/scope-step-up ]; then
      # The server asks for more scope on a call (403 insufficient_scope): the call fails naming
      # `tackle mcp login`, and the next login requests the granted and the asked-for scopes.
      tool=$("$tackle" mcp get "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_names"][0])')
      "$tackle" --allow "tool.mcp.${name}.*" call "mcp__${name}__${tool}" '{}' || true
      "$tackle" mcp login "$name"
      "$tackle" --allow "tool.mcp.${name}.*" call "mcp__${name}__${tool}" '{}'
    fi
    ;;
  tools_call)
    call add_numbers '{"a": 5, "b": 3}'
    ;;
  sse-retry)
    # The test server closes this call's SSE stream before answering: the answer arrives only
    # if the client reconnects with GET.
    call test_reconnection '{}'
    ;;
  elicitation-sep1034-client-defaults)
    call test_client_elicitation_defaults '{}'
    ;;
  *)
    "$tackle" mcp get "$name" --json
    ;;
esac
