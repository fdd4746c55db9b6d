"""The scenarios' offline world: the `ledgerline` sample codebase and a small web corpus.

Hand-written files live in `corpus/` (package data). The large files a real repository has —
a generated tax table, currency data, a legacy importer, a day of server logs, partner adapters —
are generated here from a fixed seed, so they are identical everywhere without bloating the package.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from engine.workspace.vfs import VirtualFilesystem

PROJECT_ROOT = "/project"
_SEED = "ledgerline-corpus-v1"

PARTNERS: tuple[str, ...] = (
    "amazon", "bol", "cdiscount", "ebay", "etsy", "fnac", "otto", "zalando", "allegro", "emag",
    "kaufland", "rakuten", "shopify", "walmart", "mercadolibre", "flipkart", "jumia", "trendyol",
    "noon", "lazada", "shopee", "tokopedia", "coupang", "wildberries",
)
REGIONS: tuple[str, ...] = tuple(
    f"{c}-{s}" for c in ("DE", "FR", "IT", "ES", "NL", "BE", "AT", "PL", "SE", "DK", "FI", "PT", "IE", "CZ", "US", "CA")
    for s in ("BY", "BE", "HH", "IDF", "PAC", "LOM", "MAD", "CAT", "NH", "ZH", "VL", "W", "MA", "ST", "NY", "ON",
              "CA", "TX", "QC", "BC")
)
TAX_CATEGORIES: tuple[str, ...] = ("standard", "reduced", "books", "digital")


@lru_cache(maxsize=1)
def handwritten_files() -> dict[str, str]:
    """The corpus/codebase files, keyed by their path under /project (a `.txt` suffix removed)."""
    root = resources.files("engine.scenarios") / "corpus" / "codebase"
    out: dict[str, str] = {}

    def walk(node: resources.abc.Traversable, rel: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            path = f"{rel}/{child.name}"
            if child.is_dir():
                walk(child, path)
            elif not child.name.endswith(".pyc"):
                # stored as *.txt so linters and test runners leave the sample code alone
                out[PROJECT_ROOT + path.removesuffix(".txt")] = child.read_text(encoding="utf-8")

    walk(root, "")
    return out


def _tax_tables(rng: random.Random) -> str:
    lines = ['"""Generated nightly from the finance sheet. DO NOT EDIT BY HAND."""', "",
             "from decimal import Decimal", "", "TAX_TABLE = {"]
    for region in REGIONS:
        for cat in TAX_CATEGORIES:
            if (region, cat) == ("DE-BY", "standard"):
                rate = "0.19"
            elif (region, cat) == ("FR-IDF", "standard"):
                rate = "0.20"
            else:
                rate = f"0.{rng.randint(0, 27):02d}"
            ticket = rng.randint(1000, 9999)
            lines.append(f'    ("{region}", "{cat}"): Decimal("{rate}"),  # rev 2024-{rng.randint(1, 12):02d}-'
                         f'{rng.randint(1, 28):02d} FIN-{ticket}')
    lines += ["}", "", f"ROWS = {len(REGIONS) * len(TAX_CATEGORIES)}", ""]
    return "\n".join(lines)


def _currency_data(rng: random.Random) -> str:
    codes = sorted({"".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(3)) for _ in range(900)})
    lines = ['"""ISO 4217 subset with historical EUR reference rates (generated)."""', "",
             "from decimal import Decimal", "", "CURRENCIES = {"]
    for code in codes:
        lines.append(f'    "{code}": {{"minor_units": {rng.choice((0, 2, 2, 2, 3))}, "eur_rate": Decimal("'
                     f'{rng.uniform(0.001, 40):.6f}"), "symbol": "{code[0]}$", "active": {rng.random() > 0.1}}},')
    lines += ["}", ""]
    return "\n".join(lines)


def _legacy_import(rng: random.Random) -> str:
    lines = ['"""Importer for the pre-2019 CSV export. Kept for audits; generated from the old schema."""', "",
             "from decimal import Decimal", "", "from ledgerline.billing import compute_total", "",
             "from ledgerline.models import Invoice, LineItem", ""]
    fields = ["amount", "vat", "net", "gross", "qty", "sku", "region", "currency", "customer", "issued", "due",
              "discount", "memo", "batch", "ledger", "account"]
    for i in range(250):
        f = fields[i % len(fields)]
        lines += [
            "",
            f"def parse_{f}_v{i}(row, strict=False):",
            f'    """Column {i} ({f}) of the legacy layout {rng.randint(1, 9)}."""',
            f'    raw = row.get("{f.upper()}_{i}", "").strip()',
            "    if not raw:",
            "        if strict:",
            f'            raise ValueError("missing {f} in column {i}")',
            "        return None",
            f"    if {rng.randint(0, 1)}:",
            '        raw = raw.replace(",", ".")',
            f"    return Decimal(raw) if \"{f}\" in (\"amount\", \"vat\", \"net\", \"gross\", \"discount\") else raw",
        ]
    lines += ["", "", "def import_row(row):", "    invoice = Invoice(row['ID'], None, None)",
              "    invoice.add(LineItem(row['SKU'], row['DESC'], int(row['QTY']), Decimal(row['PRICE'])))",
              "    print('imported', invoice.invoice_id, compute_total(invoice))", "    return invoice", ""]
    return "\n".join(lines)


def _server_log(rng: random.Random) -> str:
    levels = ["INFO"] * 8 + ["WARNING", "ERROR"]
    routes = ["/invoices/{id}", "/invoices/{id}/pay", "/invoices/{id}/preview", "/reports/monthly", "/health"]
    lines = []
    for i in range(1100):
        h, m, s = 6 + i * 12 // 1100, (i * 7) % 60, (i * 13) % 60
        level = rng.choice(levels)
        inv = f"INV-{rng.randint(10000, 99999)}"
        route = rng.choice(routes).format(id=inv)
        if level == "ERROR":
            msg = f"gateway error 503 on {inv} attempt {rng.randint(1, 3)} (retrying after backoff)"
        elif level == "WARNING":
            msg = f"slow request {route} took {rng.randint(900, 4000)} ms"
        else:
            msg = f"{rng.choice(['GET', 'POST'])} {route} 200 in {rng.randint(3, 400)} ms"
        lines.append(f"2024-06-14T{h:02d}:{m:02d}:{s:02d}Z {level:<7} ledgerline.api req={rng.randint(10**7, 10**8)} {msg}")
    return "\n".join(lines) + "\n"


def _adapter(partner: str, rng: random.Random) -> str:
    fee = rng.randint(5, 18)
    cls = partner.capitalize() + "Adapter"
    region = rng.choice(REGIONS)
    return "\n".join([
        f'"""{partner} marketplace adapter: maps {partner} orders to ledgerline invoices and settles payouts."""',
        "",
        "from decimal import Decimal",
        "",
        "from ledgerline.billing import compute_total",
        "from ledgerline.models import Customer, Invoice, LineItem",
        "",
        f"COMMISSION = Decimal(\"0.{fee:02d}\")",
        f'DEFAULT_REGION = "{region}"',
        f"PAGE_SIZE = {rng.choice((50, 100, 200))}",
        "",
        "",
        f"class {cls}:",
        f'    """Talks to the {partner} seller API (v{rng.randint(1, 4)}); orders are paged, payouts are weekly."""',
        "",
        f'    name = "{partner}"',
        "",
        "    def __init__(self, client, region=DEFAULT_REGION):",
        "        self.client = client",
        "        self.region = region",
        "        self.settled = {}",
        "",
        "    def fetch_orders(self, since):",
        f'        print("fetching {partner} orders since", since)',
        "        orders, page = [], 0",
        "        while True:",
        f'            resp = self.client.get("/{partner}/orders", params={{"since": since, "page": page, '
        '"size": PAGE_SIZE})',
        "            batch = resp.json()[\"orders\"]",
        "            orders.extend(batch)",
        "            if len(batch) < PAGE_SIZE:",
        "                break",
        "            page += 1",
        f'        print("{partner}: fetched", len(orders), "orders")',
        "        return orders",
        "",
        "    def to_invoice(self, order):",
        '        customer = Customer(order["buyer_id"], order["buyer_name"], order.get("region", self.region))',
        '        invoice = Invoice(f"{self.name}-{order[\'id\']}", customer, order["date"])',
        '        for line in order["lines"]:',
        '            invoice.add(LineItem(line["sku"], line["title"], line["qty"], Decimal(line["price"])))',
        '        invoice.discount_codes = list(order.get("coupons", []))',
        "        return invoice",
        "",
        "    def settle(self, order):",
        "        invoice = self.to_invoice(order)",
        "        total = compute_total(invoice)",
        "        payout = total * (1 - COMMISSION)",
        "        self.settled[invoice.invoice_id] = payout",
        f'        print("{partner} payout", invoice.invoice_id, payout)',
        "        return payout",
        "",
        "    def refund(self, order, reason):",
        "        invoice = self.to_invoice(order)",
        "        amount = compute_total(invoice)",
        f'        print("{partner} refund", invoice.invoice_id, amount, reason)',
        f'        return self.client.post("/{partner}/refunds", json={{"order": order["id"], "amount": str(amount), '
        '"reason": reason}).status_code == 200',
        "",
        "    def reconcile(self, orders, statement):",
        '        """Compare our totals with the marketplace statement; returns the mismatching order ids."""',
        "        mismatches = []",
        "        for order in orders:",
        "            ours = compute_total(self.to_invoice(order))",
        '            theirs = Decimal(statement.get(order["id"], "0"))',
        "            if abs(ours - theirs) > Decimal(\"0.01\"):",
        f'                print("{partner} mismatch", order["id"], ours, theirs)',
        '                mismatches.append(order["id"])',
        "        return mismatches",
        "",
        "    def fee_report(self):",
        "        fees = {k: v * COMMISSION / (1 - COMMISSION) for k, v in self.settled.items()}",
        f'        print("{partner} fees this week:", sum(fees.values()))',
        "        return fees",
        "",
    ])


@lru_cache(maxsize=1)
def generated_files() -> dict[str, str]:
    rng = random.Random(_SEED)
    out = {
        f"{PROJECT_ROOT}/src/ledgerline/tax_tables.py": _tax_tables(rng),
        f"{PROJECT_ROOT}/src/ledgerline/currency_data.py": _currency_data(rng),
        f"{PROJECT_ROOT}/src/ledgerline/legacy_import.py": _legacy_import(rng),
        f"{PROJECT_ROOT}/logs/server.log": _server_log(rng),
        f"{PROJECT_ROOT}/src/ledgerline/adapters/__init__.py": '"""Partner marketplace adapters."""\n',
    }
    for partner in PARTNERS:
        out[f"{PROJECT_ROOT}/src/ledgerline/adapters/{partner}.py"] = _adapter(partner, rng)
        out[f"{PROJECT_ROOT}/tests/adapters/test_{partner}.py"] = _adapter_test(partner)
    return out


def _adapter_test(partner: str) -> str:
    cls = partner.capitalize() + "Adapter"
    return "\n".join([
        "from datetime import date",
        "from decimal import Decimal",
        "",
        f"from ledgerline.adapters.{partner} import COMMISSION, {cls}",
        "",
        'ORDER = {"id": "1", "buyer_id": "B1", "buyer_name": "Ann", "region": "DE-BY", "date": date(2024, 1, 5),',
        '         "lines": [{"sku": "S1", "title": "Mug", "qty": 2, "price": "12.50"}]}',
        "",
        "",
        "def test_to_invoice_maps_lines():",
        f"    invoice = {cls}(client=None).to_invoice(ORDER)",
        "    assert [i.sku for i in invoice.items] == [\"S1\"]",
        "",
        "",
        "def test_settle_applies_commission():",
        f"    payout = {cls}(client=None).settle(ORDER)",
        '    assert payout == (Decimal("29.75") * (1 - COMMISSION))',
        "",
        "",
        "def test_reconcile_flags_mismatch():",
        f'    assert {cls}(client=None).reconcile([ORDER], {{"1": "0.00"}}) == ["1"]',
        "",
    ])


def project_files() -> dict[str, str]:
    """Every file of the sample codebase, keyed by absolute path, in sorted order."""
    files = {**handwritten_files(), **generated_files()}
    return dict(sorted(files.items()))


def load_project(vfs: VirtualFilesystem) -> None:
    """Put the sample codebase under /project in the virtual filesystem."""
    for path, text in project_files().items():
        vfs.write(path, text, layer="scenario")


# -- the web corpus ------------------------------------------------------------------------------
@dataclass(frozen=True)
class WebDocument:
    slug: str
    title: str
    url: str
    topics: tuple[str, ...]
    body: str


@lru_cache(maxsize=1)
def web_documents() -> tuple[WebDocument, ...]:
    root = resources.files("engine.scenarios") / "corpus" / "web"
    docs = []
    for child in sorted(root.iterdir(), key=lambda c: c.name):
        if not child.name.endswith(".md"):
            continue
        text = child.read_text(encoding="utf-8")
        _, front, body = text.split("---\n", 2)
        meta = dict(line.split(": ", 1) for line in front.strip().splitlines())
        docs.append(WebDocument(child.name[:-3], meta["title"], meta["url"],
                                tuple(t.strip() for t in meta["topics"].split(",")), body.strip()))
    return tuple(docs)


_WORD = re.compile(r"[a-z0-9]+")


def search_web(query: str, max_results: int = 3) -> list[WebDocument]:
    """Rank the corpus by query-term hits (topics count most); ties broken by slug for determinism."""
    terms = [t for t in _WORD.findall(query.lower()) if len(t) > 2]
    scored = []
    for doc in web_documents():
        body = doc.body.lower()
        topics = " ".join(doc.topics).lower()
        title = doc.title.lower()
        score = sum(body.count(t) + 5 * topics.count(t) + 3 * title.count(t) for t in terms)
        if score:
            scored.append((-score, doc.slug, doc))
    return [d for _, _, d in sorted(scored)[:max_results]]
