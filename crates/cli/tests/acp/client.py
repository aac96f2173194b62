"""Drives `tackle acp` with the published Python ACP client (agent-client-protocol, pinned in
scripts/install-test-deps) and prints, as one JSON document, everything the editor side saw:
each response, each session/update and each permission request with the answer it got.

    client.py first TACKLE ROOT ARGS...   a new session: three prompts (a write allowed once,
                                          a write rejected, a command cancelled while it
                                          runs), plan mode and a write it refuses, then ask
                                          mode and a prompt cancelled while its permission
                                          request is open
    client.py load TACKLE ROOT SESSION ARGS...
                                          a new process lists the project's sessions and
                                          loads the stored one

The answers to permission requests are scripted in order (ANSWERS); the command the model
runs in the third prompt writes its pid to `pid.txt` and sleeps, and the client cancels the
prompt once that file exists.
"""

import asyncio
import json
import os
import sys
import time

import acp
from acp import schema

ANSWERS = ["allow_once", "reject", "allow_once", "cancel-while-asked"]


class Editor:
    def __init__(self, root):
        self.root = root
        self.seen = []
        self.asks = []
        self.answers = list(ANSWERS)
        self.conn = None

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        answer = self.answers.pop(0) if self.answers else "reject"
        if answer == "cancel-while-asked":
            # The person cancels the prompt instead of answering; the question stays open.
            self.asks.append({"session": session_id, "call": tool_call.tool_call_id, "answer": answer})
            await self.conn.cancel(session_id=session_id)
            await asyncio.Event().wait()
        self.asks.append(
            {
                "session": session_id,
                "call": tool_call.tool_call_id,
                "title": tool_call.title,
                "options": [o.option_id for o in options],
                "kinds": [o.kind for o in options],
                "answer": answer,
            }
        )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(option_id=answer, outcome="selected")
        )

    async def session_update(self, session_id, update, **kwargs):
        self.seen.append({"session": session_id, "update": update.model_dump(mode="json", by_alias=True, exclude_none=True)})

    async def write_text_file(self, *args, **kwargs):
        raise RuntimeError("tackle must not use the editor's file system")

    async def read_text_file(self, *args, **kwargs):
        raise RuntimeError("tackle must not use the editor's file system")

    def on_connect(self, conn):
        self.conn = conn


def text(t):
    return [schema.TextContentBlock(type="text", text=t)]


async def wait_for(path, seconds):
    """Waits until `path` exists (the command has started), for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        await asyncio.sleep(0.02)


async def first(tackle, root, args):
    editor = Editor(root)
    out = {}
    async with acp.spawn_agent_process(editor, tackle, *args, "acp", cwd=root) as (conn, proc):
        editor.conn = conn
        init = await conn.initialize(protocol_version=1)
        out["initialize"] = init.model_dump(mode="json", by_alias=True, exclude_none=True)
        new = await conn.new_session(cwd=root, mcp_servers=[])
        out["new_session"] = new.model_dump(mode="json", by_alias=True, exclude_none=True)
        sid = new.session_id
        stops = []
        for prompt in ["write a.txt", "write b.txt"]:
            r = await conn.prompt(session_id=sid, prompt=text(prompt))
            stops.append(r.stop_reason)
        # The third prompt runs a command that waits; cancel it once it is running.
        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=text("wait")))
        await wait_for(os.path.join(root, "pid.txt"), 60)
        await conn.cancel(session_id=sid)
        r = await asyncio.wait_for(running, 60)
        stops.append(r.stop_reason)
        pid = int(open(os.path.join(root, "pid.txt")).read().strip())
        out["sleeper_alive_after_cancel"] = alive(pid)
        mode = await conn.set_session_mode(session_id=sid, mode_id="plan")
        r = await conn.prompt(session_id=sid, prompt=text("write c.txt"))
        stops.append(r.stop_reason)
        # Back in ask mode, a prompt cancelled while its permission request is open ends.
        await conn.set_session_mode(session_id=sid, mode_id="ask")
        r = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=text("write d.txt")), 60)
        stops.append(r.stop_reason)
        try:
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
            out["yolo_refused"] = False
        except acp.RequestError as e:
            out["yolo_refused"] = str(e)
        out["stops"] = stops
    out["updates"] = editor.seen
    out["asks"] = editor.asks
    return out


def alive(pid):
    # The sleeper may linger a moment as a zombie of nobody; a cancelled group is signalled
    # at once, so wait for it to go, up to a bound.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split()[2] == "Z":
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.02)
    return True


async def load(tackle, root, session, args):
    editor = Editor(root)
    out = {}
    async with acp.spawn_agent_process(editor, tackle, *args, "acp", cwd=root) as (conn, proc):
        await conn.initialize(protocol_version=1)
        listed = await conn.list_sessions(cwd=root)
        out["list_sessions"] = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
        loaded = await conn.load_session(cwd=root, session_id=session, mcp_servers=[])
        out["load_session"] = loaded.model_dump(mode="json", by_alias=True, exclude_none=True) if loaded else None
        try:
            await conn.prompt(session_id="no-such-session", prompt=text("hello"))
            out["unknown_session"] = None
        except acp.RequestError as e:
            out["unknown_session"] = str(e)
    out["updates"] = editor.seen
    return out


def main():
    phase, tackle, root = sys.argv[1], sys.argv[2], sys.argv[3]
    if phase == "first":
        out = asyncio.run(first(tackle, root, sys.argv[4:]))
    else:
        out = asyncio.run(load(tackle, root, sys.argv[4], sys.argv[5:]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
