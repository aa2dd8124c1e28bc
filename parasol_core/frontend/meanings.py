"""What the derived figures and the parameters they use mean, in words, for every front
end to show: the seven ratios of report section 2.2.1, ``maxtotalspd``, and any
parameter key an expression can read."""

from __future__ import annotations

from parasol_core.base import params

MAXTOTALSPD = "maxtotalspd"

# Each ratio is the time of an operation over the send time per byte (report section
# 2.2.1).
OPERATIONS: dict[str, str] = {
    "ia_spd": "integer addition",
    "im_spd": "integer multiplication",
    "da_spd": "double addition",
    "dm_spd": "double multiplication",
    "dd_spd": "double division",
    "ds_spd": "double sine",
    "dp_spd": "double power (**)",
    MAXTOTALSPD: "total link throughput, bytes/s",
}
DESCRIPTIONS: dict[str, str] = {
    **{name: f"{op} / send time per byte" for name, op in OPERATIONS.items()},
    MAXTOTALSPD: "the sum of the maximum transfer rates of all the processors, in bytes/s",
}


def parameter_meaning(key: str) -> str:
    """A parameter key in words: ``pt(1).iga`` -> ``integer global addition``."""
    if key.startswith("pt(") and "." in key:
        p = params.BY_NAME.get(key.rsplit(".", 1)[1])
        return p.description if p else ""
    if key.startswith("tl("):
        field = key.rsplit(".", 1)[1]
        return {
            "speed": "link send time per byte",
            "latency": "link latency",
            "connect(0)": "processors on the link",
        }.get(field, "link " + field)
    if key.startswith("to(") and key.endswith(".links"):
        return "links in the topology"
    if key.startswith("to(") and key.endswith(".processors"):
        return "processors in the topology"
    if key.startswith("pc("):
        return "cache " + key.rsplit(".", 1)[1]
    return ""
