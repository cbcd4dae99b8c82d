"""``fxscope push-symbols``: create both symbfiles for an executable and upload them to a symbolization service."""

from __future__ import annotations

import argparse
import sys

from app.cli import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("push-symbols", help="upload an executable's symbols (ranges and return pads)")
    p.add_argument("elf", metavar="ELF")
    p.add_argument("--url", required=True, help="base URL of the service, e.g. https://symbols.example.com")
    p.add_argument("--api-key", required=True, help="API key (sent as 'Authorization: APIKey ...', never printed)")
    p.add_argument("--chunk-size", type=int, default=1 << 20, metavar="BYTES", help="largest part (default 1 MiB)")
    p.add_argument("--retries", type=int, default=4, help="retries per part for 5xx and connection errors")
    p.add_argument("--ca-bundle", default=None, help="CA certificates to verify the server with (TLS is always verified)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.symbfile_export.create import create_symbfiles
    from core.symbfile_export.fileid import file_id, file_id_header, file_id_hex
    from core.symbfile_export.upload import UploadError, upload
    from formats.symbfile.codec import write_symbfile

    if args.chunk_size < 64:
        raise CliError("--chunk-size must be at least 64 bytes")
    if not args.url.startswith(("http://", "https://")):
        raise CliError(f"--url must be an http:// or https:// URL, not {args.url!r}")
    fid = file_id(args.elf)
    ranges, pads = create_symbfiles(args.elf)
    print(f"{args.elf}: FileID {file_id_hex(fid)}; {len(ranges)} ranges, {len(pads)} return pads")
    try:
        for kind, records in (("ranges", ranges), ("returnpads", pads)):
            result = upload(args.url, args.api_key, file_id_header(fid), kind, write_symbfile(records),
                            chunk_size=args.chunk_size, retries=args.retries, verify=args.ca_bundle or True,
                            log=lambda m: print(m, file=sys.stderr))
            print(f"{kind}: {result.parts} part(s), {result.bytes} bytes uploaded")
    except UploadError as exc:
        raise CliError(str(exc)) from None
    return 0
