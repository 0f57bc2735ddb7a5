// The capture's MCP server (stdio), written with @modelcontextprotocol/sdk's `McpServer` as its README shows.
// `record.py` copies it into the scratch npm project (for its imports to resolve there) and the agent's
// `MCPClient` starts it as `node weather_server.mjs`.
//
// get_weather answers its first call with an MCP error result (`isError: true`, a text block), as a server whose
// backend timed out does; every later call, the weather. get_forecast declares an output schema and answers with
// `structuredContent` (the data, for programs) beside a text block written for a reader (the spec's `content`: what a
// client shows a model); the two differ, as a server's often do.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const WEATHER = { Paris: 'sunny, 21°C', Lyon: 'cloudy, 17°C' };
const FORECASTS = {
  Lyon: [{ day: 'Tuesday', summary: 'showers, 15°C' }, { day: 'Wednesday', summary: 'sunny, 19°C' }],
};
let weatherFailures = 1;

const server = new McpServer({ name: 'weather', version: '1.2.0' });

server.registerTool('get_weather', {
  description: 'The current weather in a city.',
  inputSchema: { city: z.string().describe('The city to look up.') },
}, async ({ city }) => {
  if (weatherFailures > 0) {
    weatherFailures -= 1;
    return { isError: true, content: [{ type: 'text', text: 'weather service timed out' }] };
  }
  return { content: [{ type: 'text', text: WEATHER[city] }] };
});

server.registerTool('get_forecast', {
  description: 'The forecast for a city, one summary a day.',
  inputSchema: {
    city: z.string().describe('The city to look up.'),
    days: z.number().int().describe('How many days ahead.'),
  },
  outputSchema: {
    city: z.string(),
    days: z.array(z.object({ day: z.string(), summary: z.string() })),
  },
}, async ({ city, days }) => {
  const forecast = { city, days: (FORECASTS[city] ?? []).slice(0, days) };
  const text = `${city}, ${days} days: ` + forecast.days.map(({ day, summary }) => `${day} ${summary}`).join('; ') + '.';
  return { content: [{ type: 'text', text }], structuredContent: forecast };
});

await server.connect(new StdioServerTransport());
