/**
 * A release's directory name: sortable by time and unique per deployment,
 * `20261126T121314Z-1a2b3c4` (the time it was asked for, and 7 hex digits of the deployment's uuid).
 */
export function releaseName(at: Date, deploymentUuid: string): string {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${deploymentUuid.replace(/-/g, '').slice(-7)}`;
}

export const RELEASE_NAME_RE = /^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{7}$/;
