"""`gryvia ledger verify TENANT`: check a tenant's hash-chained billing ledger."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.reports import ReportFormat, ReportOutputOpt, report_format, write_csv
from gryvia_cli.cli.session import session
from gryvia_cli.core.cells import plural
from gryvia_cli.core.csvexport import to_csv
from gryvia_cli.errors import GryviaError
from gryvia_cli.output import OutputFormat, emit, render_data, success, warn
from gryvia_cli.views.ledger import read_entries
from gryvia_operator.api.names import CLI_API_VERSION

app = typer.Typer(no_args_is_help=True)


@app.callback()
def ledger() -> None:
    """The billing ledger: verify a tenant's chain.

    With the ledger on (chart value billing.ledger.enabled, operator flag --billing-ledger)
    the operator writes one GryviaLedgerEntry per sealed usage record, chained per tenant by
    SHA-256 hashes; entries are immutable. `gryvia invoice finalize` invoices from it.
    """


@app.command("verify")
def verify(
    ctx: typer.Context,
    tenant: Annotated[
        str,
        typer.Argument(metavar="TENANT", help="Tenant whose chain to check.", show_default=False),
    ],
    output: ReportOutputOpt = None,
) -> None:
    """Check a tenant's ledger chain: gaps, duplicates, broken links, edited entries.

    Reads every GryviaLedgerEntry of the tenant and recomputes each entry's hash (hash
    version v1: SHA-256 of its fields joined by newlines, docs/billing.md). Reports, naming
    the entry: content that no longer matches its hash (edited after it was written), a
    prevHash that is not the hash of the entry before (a broken chain), missing sequences
    (gaps), and two entries with one sequence or one usage record (duplicates). Exits 1 when
    any problem is found.

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: LedgerVerification, tenant, entries, valid,
    problems[], headSequence, headHash, hashVersion}. CSV:
    `tenant,valid,entries,headSequence,headHash,hashVersion,problem`, one row per problem
    (one row with an empty problem when valid). A tenant that does not exist and has no
    entries is an error (exit 1).

    Examples:
      gryvia ledger verify vision
      gryvia ledger verify vision -o json
    """
    from gryvia_cli.views.reads import read_billable_tenants
    from gryvia_operator.api.ledger import verify as verify_chain

    state = session(ctx)
    fmt = report_format(state, output)
    access = state.access()
    result = verify_chain(tenant, read_entries(access))
    tenants = read_billable_tenants(access) if result.entries == 0 else None
    if tenants is not None and tenant not in tenants:
        raise GryviaError(
            f"tenant {tenant} does not exist and has no ledger entries: nothing to verify",
            hint="check the TENANT argument; see: gryvia tenant list",
        )
    if result.entries == 0:
        warn(
            f"no ledger entries for {tenant}: the operator writes one per sealed usage record "
            "only with the ledger on (chart value billing.ledger.enabled, flag --billing-ledger)"
        )
    if fmt is ReportFormat.csv:
        write_csv(verification_csv(result.to_dict()))
    elif fmt is not ReportFormat.table:
        doc = {"apiVersion": CLI_API_VERSION, "kind": "LedgerVerification", **result.to_dict()}
        render_data(doc, OutputFormat(fmt.value))
    elif result.valid:
        head = result.head
        success(
            f"ledger of {tenant} is valid: {plural(result.entries, 'entry', 'entries')}, "
            "head sequence "
            f"{head.sequence}" + (f", hash {head.hash[:16]}..." if head.hash else "")
        )
    else:
        for problem in result.problems:
            emit(problem)
    if not result.valid:
        raise GryviaError(
            f"ledger of {tenant} is invalid: {len(result.problems)} problem(s) in "
            f"{plural(result.entries, 'entry', 'entries')}",
            hint="entries are immutable: a problem means an entry was edited, deleted or "
            "added by hand (with the webhook off)",
        )


def verification_csv(doc: dict[str, Any]) -> str:
    """CSV of a verification `doc` (`LedgerVerification.to_dict()`): one row per problem,
    or one row with an empty problem when the chain is valid; cells guarded as every CSV
    export's (`core.csvexport.to_csv`)."""
    header = ["tenant", "valid", "entries", "headSequence", "headHash", "hashVersion", "problem"]
    head = [doc["tenant"], str(doc["valid"]).lower(), doc["entries"], doc["headSequence"]]
    rows = [[*head, doc["headHash"], doc["hashVersion"], p] for p in doc["problems"] or [""]]
    return to_csv(header, rows)
