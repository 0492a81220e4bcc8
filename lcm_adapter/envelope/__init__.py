"""The event envelope every face hands the runtime (DSH's `session/event` shape), parsed into rows.

Below the runtime and the faces alike: the DSH sidecar and log ingest, and the Claude
hooks, which build the same envelopes, use the runtime, and the runtime uses this.
"""
