/** PEM bundles as nginx and OpenSSL expect them: one block after another, each ending in a newline. */
const CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/** The certificates of a bundle in order, each normalised to end with a single newline. */
export function splitCertificates(pem: string): string[] {
  return [...pem.matchAll(CERTIFICATE)].map((match) => `${match[0].replace(/\r\n/g, '\n')}\n`);
}
