"""``fxscope push-symbols``: create both symbfiles for an executable and upload them to a symbolization service."""

from __future__ import annotations

import argparse
import sys

from fxscope.app.cli_error import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("push-symbols", help="upload an executable's symbols (ranges and return pads)")
    p.add_argument("elf", metavar="ELF")
    p.add_argument("--url", required=True, help="base URL of the service, e.g. https://symbols.example.com")
    p.add_argument("--api-key", required=True, help="API key (sent as 'Authorization: APIKey ...', never printed)")
    p.add_argument("--chunk-size", type=int, default=1 << 20, metavar="BYTES", help="largest part (default 1 MiB)")
    p.add_argument("--retries", type=int, default=4,
                   help="retries per part for 429/5xx answers and connection errors (default 4)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="give up connecting after this long (default 10)")
    p.add_argument("--read-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="give up when the server is silent this long (default 30)")
    p.add_argument("--part-deadline", type=float, default=300.0, metavar="SECONDS",
                   help="most time for one part, retries and waits included (default 300)")
    p.add_argument("--deadline", type=float, default=1800.0, metavar="SECONDS",
                   help="most time for the whole upload (default 1800)")
    p.add_argument("--ca-bundle", default=None, help="CA certificates to verify the server with (TLS is always verified)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fxscope.core.http_client import Deadline, HttpClient, HttpLimits
    from fxscope.core.symbfile_export.create import create_symbfiles
    from fxscope.core.symbfile_export.fileid import file_id, file_id_header, file_id_hex
    from fxscope.core.symbfile_export.upload import UploadError, UploadLimits, upload
    from fxscope.formats.symbfile.codec import write_symbfile

    if args.chunk_size < 64:
        raise CliError("--chunk-size must be at least 64 bytes")
    if not args.url.startswith(("http://", "https://")):
        raise CliError(f"--url must be an http:// or https:// URL, not {args.url!r}")
    for name in ("connect_timeout", "read_timeout", "part_deadline", "deadline"):
        if not 0 < getattr(args, name) <= 86400:
            raise CliError(f"--{name.replace('_', '-')} must be more than 0 and at most 86400 seconds")
    if not 0 <= args.retries <= 20:
        raise CliError("--retries must be between 0 and 20")
    limits = UploadLimits(
        HttpLimits(connect_timeout=args.connect_timeout, read_timeout=args.read_timeout, retries=args.retries),
        part_deadline=args.part_deadline, total_deadline=args.deadline)
    client = HttpClient(limits.http, verify=args.ca_bundle or True, secrets=[args.api_key])
    fid = file_id(args.elf)
    ranges, pads = create_symbfiles(args.elf)
    print(f"{args.elf}: FileID {file_id_hex(fid)}; {len(ranges)} ranges, {len(pads)} return pads")
    total = Deadline(args.deadline, "upload deadline (--deadline)")
    try:
        for kind, records in (("ranges", ranges), ("returnpads", pads)):
            result = upload(args.url, args.api_key, file_id_header(fid), kind, write_symbfile(records),
                            chunk_size=args.chunk_size, limits=limits, total=total, client=client,
                            log=lambda m: print(m, file=sys.stderr))
            print(f"{kind}: {result.parts} part(s), {result.bytes} bytes uploaded")
    except UploadError as exc:
        raise CliError(str(exc)) from None
    return 0
