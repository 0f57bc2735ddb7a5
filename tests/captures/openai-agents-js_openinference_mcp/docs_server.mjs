// The MCP server record.py's Node script runs over stdio (the SDK's MCPServerStdio): two tools over a small
// in-memory docs corpus, written with the MCP TypeScript SDK (`McpServer.registerTool`, `StdioServerTransport`).
// `read_file` of a path not in the corpus returns an `isError` result, as the MCP spec has a tool report a failure
// the model should see (not a protocol error), so that the agent's retry of it is in the capture.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const DOCS = {
  'policies/refunds.md': 'Refunds are issued within 14 days of purchase, to the original payment method.',
  'faq.md': 'Q: Can I get a refund after 14 days? A: Only as store credit.',
  'handbook/shipping.md': 'Shipping is free over 50 EUR; otherwise a flat 4.90 EUR.',
};

const server = new McpServer({ name: 'docs', version: '1.0.0' });

server.registerTool('search_docs', {
  description: 'Search the docs; returns the paths of the documents that mention the query.',
  inputSchema: { query: z.string() },
}, async ({ query }) => {
  const hits = Object.entries(DOCS)
    .filter(([path, text]) => `${path} ${text}`.toLowerCase().includes(query.toLowerCase()))
    .map(([path]) => path);
  return { content: [{ type: 'text', text: hits.join('\n') || 'no documents found' }] };
});

server.registerTool('read_file', {
  description: 'Read one document of the docs by its path.',
  inputSchema: { path: z.string() },
}, async ({ path }) => {
  if (!(path in DOCS)) {
    return { content: [{ type: 'text', text: `No such document: ${path}` }], isError: true };
  }
  return { content: [{ type: 'text', text: DOCS[path] }] };
});

await server.connect(new StdioServerTransport());
