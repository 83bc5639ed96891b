"""API prices (economics/api_prices.py): the price catalog, blended prices, margins, and
DeepSeek's published serving economics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenomics as tk
from tokenomics.data.rentals import rental_price
from tokenomics.economics.api_prices import (
    blended_price,
    margin,
    price,
    price_table,
    serving_day,
)
from tokenomics.economics.cost import cost_per_million_tokens


def test_deepseek_daily_cost_to_the_dollar_and_revenue():
    # 226.75 nodes x 8 H800 x $2 x 24 h = $87,072 (calibration row B37, exact).
    d = serving_day(226.75, 8, 2.0, 608e9, 342e9, 168e9, "deepseek/deepseek-reasoner")
    assert d.cost_usd == 87_072
    # Revenue at R1 prices: 266B misses x $0.55 + 342B hits x $0.14 + 168B out x $2.19
    # = 146,300 + 47,880 + 367,920 = $562,100 (DeepSeek published $562,027 from unrounded
    # token counts), cost-profit margin ~545%.
    assert d.revenue_usd == pytest.approx(562_100)
    assert d.revenue_usd == pytest.approx(562_027, rel=2e-4)
    assert round(d.cost_profit_margin * 100) == 546
    assert rental_price(tk.hardware("h800")).usd == 2.0


def test_price_catalog_and_S30():
    t = price_table().set_index("id")
    assert t.loc["anthropic/claude-sonnet-4.x", "cached_input_usd_per_mtok"] == 0.30
    # S30: Anthropic cached input 0.1x; OpenAI GPT-5.x 90% off; batch ~50%; output 4-5x input.
    s = price("anthropic/claude-sonnet-4.x")
    assert s.cached_input / s.input == pytest.approx(0.1)
    g = price("openai/gpt-5.x")
    assert 1 - g.cached_input / g.input == pytest.approx(0.9)
    assert s.batch_discount == 0.5
    assert 4 <= s.output / s.input <= 5
    # S32: Groq $0.15 in / $0.60 out.
    q = price("groq/open-model-s32")
    assert (q.input, q.output) == (0.15, 0.60)
    # calibration D01, D03, D06.
    r1 = price("deepseek/deepseek-reasoner")
    assert (r1.cached_input, r1.input, r1.output) == (0.14, 0.55, 2.19)
    o = price("anthropic/claude-opus-4.1")
    assert (o.input, o.cache_write_5m, o.cache_write_1h, o.cached_input, o.output) == \
        (15, 18.75, 30, 1.50, 75)
    assert price("openai/gpt-4o").cached_input == 1.25
    with pytest.raises(tk.UnknownEntryError, match="unknown price id"):
        price("acme/model")


def test_blended_price_by_hand():
    # 3:1 input:output at Sonnet 4.x list prices: (3 x 3 + 15) / 4 = $6.00 per Mtok.
    assert blended_price("anthropic/claude-sonnet-4.x", 3, 1) == pytest.approx(6.0)
    # Half the input cached: (1.5 x 3 + 1.5 x 0.3 + 15) / 4 = 4.9875.
    assert blended_price("anthropic/claude-sonnet-4.x", 3, 1, 0.5) == pytest.approx(4.9875)
    # Batch tier: half.
    assert blended_price("anthropic/claude-sonnet-4.x", 3, 1, batch=True) == pytest.approx(3.0)
    # Cache writes at 1.25x (Sonnet 5, 5-minute TTL): all input written once.
    assert blended_price("anthropic/claude-sonnet-5", 1, 0, 0, 1.0) == pytest.approx(2.50)


def test_S33_same_headline_price_3x_apart_on_real_traffic():
    # Two providers with the same headline ($3 in / $15 out): one discounts cache hits 90%
    # (Anthropic-style), the other 50% (OpenAI-style, at the same headline). Agentic traffic:
    # 20 input tokens per output token, 90% of input cached.
    a = price("anthropic/claude-sonnet-4.x")
    b = tk.economics.ApiPrice(id="b/same-headline", provider="B", model="x", date="2026",
                              input=3.0, cached_input=1.5, cache_write_5m=None,
                              cache_write_1h=None, output=15.0, batch_discount=None,
                              sources={})
    pa = blended_price(a, 20, 1, cache_hit_rate=0.9)
    pb = blended_price(b, 20, 1, cache_hit_rate=0.9)
    # By hand: A = (20 x (0.1 x 3 + 0.9 x 0.3) + 15) / 21 = 1.257; B = (20 x 1.65 + 15) / 21 = 2.286
    assert pa == pytest.approx((20 * (0.1 * 3 + 0.9 * 0.3) + 15) / 21)
    assert pb == pytest.approx((20 * (0.1 * 3 + 0.9 * 1.5) + 15) / 21)
    # Against a provider with no cache discount at all, the gap is ~3x.
    c = tk.economics.ApiPrice(id="c/no-cache", provider="C", model="x", date="2026", input=3.0,
                              cached_input=3.0, cache_write_5m=None, cache_write_1h=None,
                              output=15.0, batch_discount=None, sources={})
    assert 2.5 < blended_price(c, 20, 1, 0.9) / pa < 3.5


def test_blended_price_errors():
    with pytest.raises(tk.NotPublishedError, match="output price not published"):
        blended_price("openai/gpt-5.x", 3, 1)
    assert blended_price("openai/gpt-5.x", 1, 0, 0.5) == pytest.approx(2.75)
    with pytest.raises(tk.TokenomicsError, match="cache_hit_rate must be in"):
        blended_price("openai/gpt-4o", 3, 1, 1.5)
    with pytest.raises(tk.TokenomicsError, match="input_tokens must be >= 0"):
        blended_price("openai/gpt-4o", -3, 1)
    with pytest.raises(tk.TokenomicsError, match="usd_per_device_hour must be >= 0"):
        cost_per_million_tokens(-1, 1000)


@given(h=st.floats(0, 1), ratio=st.floats(0.01, 100))
def test_blended_price_falls_with_hit_rate_and_stays_within_list_prices(h, ratio):
    p = price("anthropic/claude-sonnet-5")
    v = blended_price(p, ratio, 1, h)
    assert blended_price(p, ratio, 1, min(1.0, h + 0.1)) <= v + 1e-12
    assert p.cached_input - 1e-12 <= v <= p.output + 1e-12


def test_margin():
    assert margin(2.0, 0.5) == 0.75
    assert margin(1.0, 2.0) == -1.0
    with pytest.raises(tk.TokenomicsError, match="price_usd_per_mtok must be > 0"):
        margin(0, 1)


def test_api_prices_on_dated_sources():
    # OpenAI "Prompt Caching in the API" (2024-10-01): gpt-4o-2024-08-06 $2.50 / $1.25 cached /
    # $10.00 per 1M tokens; gpt-4o-mini $0.15 / $0.075 / $0.60
    g4 = price("openai/gpt-4o")
    assert (g4.date, g4.input, g4.cached_input, g4.output) == ("2024-10-01", 2.50, 1.25, 10.00)
    assert price("openai/gpt-4o-mini").output == 0.60
    # GPT-5 at launch (2025-08-07): $1.25 / $0.125 / $10.00, the Batch API at half
    g5 = price("openai/gpt-5")
    assert (g5.input, g5.cached_input, g5.output, g5.batch_discount) == (1.25, 0.125, 10.0, 0.5)
    # Groq Llama 3.3 70B Versatile $0.59 in / $0.79 out: a 3:1 input:output blend is
    # (3 x 0.59 + 0.79) / 4 = $0.64 per 1M tokens
    assert blended_price("groq/llama-3.3-70b-versatile", 3, 1) == pytest.approx(0.64)


def test_a_day_that_costs_nothing_has_no_margin():
    # (revenue - cost) / cost at a $0/h price was a ZeroDivisionError (issue 25)
    with pytest.raises(tk.TokenomicsError, match="margin is"):
        tk.serving_day(300, 8, 0.0, 1e9, 0, 1e8, "openai/gpt-5.2")


def test_deepseek_s_later_prices_each_with_its_source():
    # price-deepseek-api-2025-09: from 2025-09-05, one list for both endpoints (V3.1)
    v31 = price("deepseek/deepseek-v3.1")
    assert (v31.cached_input, v31.input, v31.output) == (0.07, 0.56, 1.68)
    # price-deepseek-api-v32: V3.2 behind both endpoints, as the page gave it in April 2026;
    # a cache hit is a tenth of a miss
    v32 = price("deepseek/deepseek-v3.2")
    assert (v32.cached_input, v32.input, v32.output) == (0.028, 0.28, 0.42)
    assert v32.cached_input / v32.input == pytest.approx(0.1)
    # R1's February 2025 price (day-6's accounting) stays, marked superseded
    assert "superseded" in price("deepseek/deepseek-reasoner").note
