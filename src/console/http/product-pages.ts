/**
 * The console's products pages; pure. The list (search, availability, archived, pages by id) shows each
 * product's variants with their price, list price, availability and stock; a product's page has the forms
 * that change it, each carrying the product's version as the page showed it.
 */
import { Availability, type StoredProduct, type StoredVariant } from "../../catalog/model/product.ts"
import type { ProductWithStock } from "../../catalog/product-store.ts"
import { type Html, html } from "../../shared/html.ts"
import { formatAmount } from "../../shared/money.ts"
import { CONSOLE_PATH } from "./cookies.ts"
import { csrfField, time } from "./layout.ts"

export const PRODUCTS_PATH = `${CONSOLE_PATH}/products`
export const productPath = (id: string) => `${PRODUCTS_PATH}/${encodeURIComponent(id)}`

export const AVAILABILITIES: ReadonlyArray<Availability> = Availability.literals

export interface ProductListFilter {
  readonly q?: string | undefined
  readonly availability?: Availability | undefined
  readonly archived: boolean
  /** The last product id of the previous page. */
  readonly after?: string | undefined
}

export interface ProductList {
  readonly products: ReadonlyArray<ProductWithStock>
  readonly filter: ProductListFilter
  /** The `after` of the next page; none on the last. */
  readonly next: string | undefined
  readonly currency: string
}

/** Minor units as a form's decimal, exactly: 2500 → `25.00`. */
export const decimalOf = (amount: number): string =>
  `${Math.floor(amount / 100)}.${String(amount % 100).padStart(2, "0")}`

const levelOf = (found: ProductWithStock, variantId: string) => found.stock.get(variantId) ?? { onHand: 0, reserved: 0 }

const variantTitle = (product: StoredProduct, variant: StoredVariant) => variant.title ?? product.title

const badge = (text: string) => html`<span class="status">${text.replaceAll("_", " ")}</span>`

const listQuery = (filter: ProductListFilter, after?: string) => {
  const query = new URLSearchParams()
  if (filter.q !== undefined) query.set("q", filter.q)
  if (filter.availability !== undefined) query.set("availability", filter.availability)
  if (filter.archived) query.set("archived", "true")
  if (after !== undefined) query.set("after", after)
  const text = query.toString()
  return text === "" ? PRODUCTS_PATH : `${PRODUCTS_PATH}?${text}`
}

const searchForm = (filter: ProductListFilter): Html =>
  html`<form method="get" action="${PRODUCTS_PATH}" role="search">
<label>Search <input type="search" name="q" value="${filter.q ?? ""}" maxlength="128"
placeholder="title, description or id"></label>
<label>Availability <select name="availability"><option value="">any</option>${
    AVAILABILITIES.map((name) =>
      html`<option value="${name}"${name === filter.availability && html` selected`}>${
        name.replaceAll("_", " ")
      }</option>`
    )
  }</select></label>
<label><input type="checkbox" name="archived" value="true"${filter.archived && html` checked`}> with archived</label>
<button type="submit">Show</button></form>`

const variantCells = (found: ProductWithStock, variant: StoredVariant, currency: string): Html => {
  const level = levelOf(found, variant.id)
  return html`<td>${variantTitle(found.product, variant)} <small>(${variant.id})</small>${
    variant.archivedAt !== undefined && html` ${badge("archived")}`
  }</td><td class="n">${formatAmount(variant.unit_amount, currency)}</td><td class="n opt">${
    variant.list_amount === undefined ? "–" : formatAmount(variant.list_amount, currency)
  }</td><td>${badge(variant.availability)}</td><td class="n">${level.onHand}</td><td class="n">${level.reserved}</td>`
}

export const renderProductList = (list: ProductList): Html =>
  html`${searchForm(list.filter)}${
    list.products.length === 0
      ? html`<p>No products${
        list.filter.q !== undefined || list.filter.availability !== undefined || list.filter.after !== undefined
          ? " match"
          : " yet"
      }.</p>`
      : html`<table><thead><tr><th scope="col">Product</th><th scope="col">Variant</th><th scope="col" class="n">Price</th>
<th scope="col" class="n opt">List price</th><th scope="col">Availability</th><th scope="col" class="n">On hand</th>
<th scope="col" class="n">Reserved</th></tr></thead><tbody>${
        list.products.map((found) =>
          found.product.variants.map((variant, index) =>
            html`<tr>${
              index === 0 &&
              html`<th scope="row" rowspan="${found.product.variants.length}"><a href="${
                productPath(found.product.id)
              }">${found.product.title}</a> <small>(${found.product.id})</small>${
                found.product.archivedAt !== undefined && html` ${badge("archived")}`
              }</th>`
            }${variantCells(found, variant, list.currency)}</tr>`
          )
        )
      }</tbody></table>`
  }<p>${list.filter.after !== undefined && html`<a href="${listQuery(list.filter)}">First page</a> `}${
    list.next !== undefined && html`<a href="${listQuery(list.filter, list.next)}" rel="next">Next page</a>`
  }</p>`

export interface ProductDetail {
  readonly found: ProductWithStock
  readonly currency: string
  readonly csrfToken: string
}

/** A form of the product's page: the session's token and the version the page shows. */
const productForm = (detail: ProductDetail, action: string, label: string, fields: Html) =>
  html`<form method="post" action="${productPath(detail.found.product.id)}/${action}">${csrfField(detail.csrfToken)}
<input type="hidden" name="version" value="${detail.found.product.version}">${fields}<button type="submit">${label}</button></form>`

const variantForm = (detail: ProductDetail, variant: StoredVariant): Html => {
  const level = levelOf(detail.found, variant.id)
  const currency = detail.currency.toUpperCase()
  return html`<fieldset><legend>Variant ${variant.id}</legend>${
    productForm(
      detail,
      `variants/${encodeURIComponent(variant.id)}`,
      "Save variant",
      html`<input type="hidden" name="stock_seen" value="${level.onHand}">
<label>Price in ${currency} <input name="unit_amount" required inputmode="decimal" pattern="[0-9]+([.][0-9]{1,2})?"
value="${decimalOf(variant.unit_amount)}" size="10"></label>
<label>List price in ${currency} <input name="list_amount" inputmode="decimal" pattern="[0-9]+([.][0-9]{1,2})?"
value="${variant.list_amount === undefined ? "" : decimalOf(variant.list_amount)}" size="10" placeholder="none"></label>
<label>Stock on hand <input name="stock" required inputmode="numeric" pattern="[0-9]+" value="${level.onHand}"
size="8"></label>
<label>Availability <select name="availability">${
        AVAILABILITIES.map((name) =>
          html`<option value="${name}"${name === variant.availability && html` selected`}>${
            name.replaceAll("_", " ")
          }</option>`
        )
      }</select></label>
<small>${level.reserved} held by checkout sessions (stock cannot go below that)</small>`
    )
  }</fieldset>`
}

export const renderProductDetail = (detail: ProductDetail): Html => {
  const { currency, found } = detail
  const { product } = found
  const archived = product.archivedAt !== undefined
  return html`<dl><dt>Id</dt><dd>${product.id}</dd><dt>Status</dt><dd>${
    archived ? html`${badge("archived")} since ${time(product.archivedAt)}: no longer sold` : badge("sold")
  }</dd><dt>Version</dt><dd>${product.version}</dd><dt>Updated</dt><dd>${time(product.updatedAt)}</dd></dl>
<section aria-labelledby="variants"><h2 id="variants">Variants</h2><table><thead><tr><th scope="col">Variant</th>
<th scope="col" class="n">Price</th><th scope="col" class="n opt">List price</th><th scope="col">Availability</th>
<th scope="col" class="n">On hand</th><th scope="col" class="n">Reserved</th></tr></thead><tbody>${
    product.variants.map((variant) => html`<tr>${variantCells(found, variant, currency)}</tr>`)
  }</tbody></table></section>
<section aria-labelledby="edit"><h2 id="edit">Change</h2>${
    archived
      ? html`<p>An archived product is not changed here (<code>PUT /products/${product.id}</code> sells it again).</p>`
      : html`<fieldset><legend>Title</legend>${
        productForm(
          detail,
          "title",
          "Save title",
          html`<label>Title <input name="title" required maxlength="256" size="50" value="${product.title}"></label>`
        )
      }</fieldset>${
        product.variants.filter((variant) => variant.archivedAt === undefined).map((variant) =>
          variantForm(detail, variant)
        )
      }<fieldset><legend>Archive</legend><p>An archived product is no longer sold; the sessions and orders that hold
it still name it.</p>${productForm(detail, "archive", "Archive product", html``)}</fieldset>`
  }</section>
<p><a href="${PRODUCTS_PATH}">All products</a></p>`
}
