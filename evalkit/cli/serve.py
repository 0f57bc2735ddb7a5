"""`evalkit serve`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from pathlib import Path

from evalkit.cli.http import CliError
from evalkit.settings import SettingsError, load_settings


def serve(args: argparse.Namespace) -> int:
    from evalkit.serve import Service
    from evalkit.store import StoreLocked

    try:
        settings = load_settings({
            "data_dir": args.data_dir, "host": args.host, "grpc_port": args.grpc_port,
            "otlp_http_port": args.otlp_http_port, "api_port": args.api_port,
        })
    except SettingsError as exc:
        raise CliError(str(exc)) from exc
    logging.basicConfig(level=os.environ.get("EVALKIT_LOG_LEVEL", "WARNING"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    async def run() -> None:
        service = Service(settings, say=lambda line: print(line, flush=True))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await service.start()
        stopped, failed = asyncio.create_task(stop.wait()), asyncio.create_task(service.fatal.wait())
        await asyncio.wait({stopped, failed}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        failed.cancel()
        if service.fatal_error is not None:
            await service.stop()
            raise CliError(f"could not prepare the store: {service.fatal_error}. Nothing was received; "
                           f"fix the store (or EVALKIT_CLICKHOUSE_URL) and start `evalkit serve` again")
        print("evalkit: draining…", flush=True)
        await service.stop()

    try:
        asyncio.run(run())
    except StoreLocked as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(str(exc)) from exc
    return 0




def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve_parser = sub.add_parser("serve", help="run the OTLP receivers, the API and scoring in one process")
    serve_parser.add_argument("--data-dir", type=Path, help="where the embedded store lives (default ./.evalkit)")
    serve_parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve_parser.add_argument("--grpc-port", type=int, help="OTLP/gRPC port (default 4317)")
    serve_parser.add_argument("--otlp-http-port", type=int, help="OTLP/HTTP port (default 4318)")
    serve_parser.add_argument("--api-port", type=int, help="API port (default 8000)")
    serve_parser.set_defaults(func=serve)
