/**
 * The vault-token payment handler this business advertises (a processor-tokenizer handler: the vault
 * that tokenizes the card is the one that charges it): its specification, served as Markdown at its
 * `spec` URL, and its JSON Schema at its `schema` URL.
 */

export const vaultHandlerSpec = (name: string, tokenizeUrl: string) =>
  `# ${name}

A processor-tokenizer payment handler: the business's card vault tokenizes a card into a \`vt_\`
token usable only within an allowance, and charges it when the checkout completes.

## Config (business and response)

| Field | Type | Meaning |
|---|---|---|
| \`environment\` | string | \`sandbox\` or \`production\` |
| \`business_id\` | string | the merchant id an allowance must name |
| \`tokenize_url\` | string | where a card is tokenized (${tokenizeUrl}) |

\`available_instruments\`: \`[{"type": "card", "constraints": {"brands": [...]}}]\`.

## Tokenizing

\`POST tokenize_url\` is the Delegate Payment API of ACP 2026-04-17 (an agent API key of this
business, \`API-Version: 2026-04-17\`, an \`Idempotency-Key\`): the card as \`payment_method\`, and an
\`allowance\` with \`reason: "one_time"\`, \`max_amount\` at least the checkout's total (minor units),
its \`currency\` (lowercase), \`checkout_session_id\` the UCP checkout's \`id\`, \`merchant_id\` the
config's \`business_id\` and an \`expires_at\`. The answer's \`id\` is the token.

## Completing

\`POST /checkout-sessions/{id}/complete\` with one selected instrument of this handler's \`id\`,
\`type: "card"\` and \`credential: {"type": "token", "token": "vt_…"}\`. The token is charged once, for the
checkout's total, and only within its allowance; a card whose issuer asks for 3-D Secure is declined
(\`payment_failed\`): this handler carries no authentication result.
`

export const vaultHandlerSchema = (schemaUrl: string) => ({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: schemaUrl,
  title: "Vault token payment handler",
  $defs: {
    config: {
      type: "object",
      required: ["environment", "business_id", "tokenize_url"],
      properties: {
        environment: { type: "string", enum: ["sandbox", "production"] },
        business_id: { type: "string" },
        tokenize_url: { type: "string", format: "uri" }
      }
    },
    credential: {
      type: "object",
      required: ["type", "token"],
      properties: {
        type: { const: "token" },
        token: { type: "string", pattern: "^vt_" }
      }
    }
  }
})
