"""An OpenAI Agents SDK agent with no tracing code: a triage agent hands over to a weather agent
that calls a tool, plain (``run_sync``) then streamed (``run_streamed``), against the model server
at ``OPENAI_BASE_URL``."""

import asyncio
import os

import agents
import openai
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

agents.set_tracing_disabled(True)  # the SDK's own tracing would export to the vendor


@function_tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def triage() -> Agent:
    """A client of its own per run: an async client's pooled connections belong to one event loop."""
    client = openai.AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="sk-test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
    weather = Agent(name="weather", instructions="Weather questions.", model=model, tools=[get_weather])
    return Agent(name="triage", instructions="Route the question.", model=model, handoffs=[weather])


print(Runner.run_sync(triage(), "What's the weather in Paris?").final_output)


async def streamed() -> str:
    run = Runner.run_streamed(triage(), "What's the weather in Paris?")
    async for _event in run.stream_events():
        pass
    return run.final_output


print(asyncio.run(streamed()))
