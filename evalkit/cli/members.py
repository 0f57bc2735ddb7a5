"""`evalkit members list|set|remove WORKSPACE …`: who may do what in a shared workspace."""

from __future__ import annotations

import argparse

from evalkit.cli.http import call, client_options, emit, quote


def _list(args: argparse.Namespace) -> int:
    data = call(args, "GET", f"/api/workspaces/{quote(args.workspace)}/members")
    emit(args, data, [f"{m['user']:30} {m['role']}" for m in data["members"]]
         or [f"workspace {args.workspace} has no members"])
    return 0


def _set(args: argparse.Namespace) -> int:
    data = call(args, "PUT", f"/api/workspaces/{quote(args.workspace)}/members/{quote(args.user)}",
                {"role": args.role})
    emit(args, data, [f"{args.user} is {args.role} of {args.workspace}"])
    return 0


def _remove(args: argparse.Namespace) -> int:
    data = call(args, "DELETE", f"/api/workspaces/{quote(args.workspace)}/members/{quote(args.user)}")
    emit(args, data, [f"{args.user} removed from {args.workspace}" if data.get("removed")
                      else f"{args.user} was not a member of {args.workspace}"])
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    members = sub.add_parser("members", help="members of a shared workspace and their roles").add_subparsers(
        dest="action", required=True)
    p = client_options(members.add_parser("list", help="a workspace's members"))
    p.add_argument("workspace")
    p.set_defaults(func=_list)
    p = client_options(members.add_parser("set", help="add a member, or change a member's role"))
    p.add_argument("workspace")
    p.add_argument("user")
    # The roles of evalkit/access.py, written out: the CLI runs on the thin install, without the store.
    p.add_argument("role", choices=["reader", "reviewer", "writer", "admin", "owner"])
    p.set_defaults(func=_set)
    p = client_options(members.add_parser("remove", help="remove a member"))
    p.add_argument("workspace")
    p.add_argument("user")
    p.set_defaults(func=_remove)
