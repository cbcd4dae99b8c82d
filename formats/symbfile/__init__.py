"""Elastic / OpenTelemetry symbfiles: framing, protobuf messages (symbfile.proto), reader and writer."""
