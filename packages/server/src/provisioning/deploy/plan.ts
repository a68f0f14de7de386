import type { ProvisionedSite, Step } from '../step.js';

/**
 * What one deployment or rollback does on a site's server: decided by the control plane
 * (use-cases/deployments, from the site's source, deploy settings and environment) and carried out
 * by the deploy steps (provisioning/deploy). Every value here was validated before it got here; the
 * steps check path-like values again (site-layout.ts) and pass everything as argv or stdin.
 *
 * On the server (ARCHITECTURE §2 "Deployments"):
 *   <site root>/repo              bare mirror of the repository (git fetch only what changed)
 *   <site root>/releases/<id>/    one directory per release, with .siteplane-release.json (manifest)
 *   <site root>/shared/           files and folders kept across releases, linked into each release
 *   <site root>/current           symlink → releases/<id>, switched by rename(2)
 * Everything under the site root is written by the site user (runuser), never by root.
 */

/** Where the code comes from. */
export type DeploySource =
  | {
      kind: 'git';
      /** Remote URL (https://, ssh:// or scp-like git@host:owner/repo.git); never file:// or ext::. */
      url: string;
      branch: string;
      /** A commit to deploy; null = the branch's head at fetch time. */
      commit: string | null;
      /** Sub-directory of the repository that holds the app (monorepos); null = the root. */
      appFolder: string | null;
      /**
       * How to authenticate. Written only to a 0600 file of the site user for the fetch and removed
       * after it; never in a URL that is logged, never in the manifest.
       */
      credentials: { sshPrivateKey: string } | { httpsUser: string; httpsToken: string } | null;
    }
  | {
      kind: 'artifact';
      /**
       * A .tar.gz built elsewhere (CI) and uploaded to the control plane: this file of its data
       * directory (storage/artifact-store.ts), sent to the server in chunks and unpacked by the site user.
       */
      file: string;
      /** What the control plane received; checked again on the server before unpacking. */
      sha256: string;
      bytes: number;
    };

/** A user's command, run as the site user in the new release with `bash -euo pipefail -c`. */
export interface DeployHook {
  /** Shown as the step's name: `hook: <name>`. */
  name: string;
  command: string;
  /** after-fetch: before the build; before-activate: after the build; after-activate: once live. */
  stage: 'after-fetch' | 'before-activate' | 'after-activate';
  enabled: boolean;
}

export interface DeployPlan {
  deploymentUuid: string;
  /** Directory name under releases/: sortable and unique, e.g. `20261126T121314Z-1a2b3c4`. */
  release: string;
  source: DeploySource;
  /**
   * Runs in the release (after-fetch hooks first) as the site user; null = nothing to build (always
   * for an artifact, which arrives built; its after-fetch hooks are left out of the plan too).
   */
  buildCommand: string | null;
  /** Relative directory of the release that is served or run; null = the type's default. */
  artifactPath: string | null;
  /** The user's and the type's default hooks, in order; the platform's own steps are not hooks. */
  hooks: DeployHook[];
  /** Relative paths linked from shared/ into every release (`.env`, `storage`). */
  sharedPaths: { path: string; kind: 'file' | 'directory' }[];
  /** Environment variables, opened from their sealed form just for this run; redacted in logs. */
  environment: { build: Record<string, string>; runtime: Record<string, string> };
  /** Releases kept after a successful deploy (the live one included). */
  keepReleases: number;
  /**
   * The releases of earlier successful deploys the control plane still offers for rollback (the
   * newest keepReleases − 1). When given, prune keeps exactly these, the live release and the one
   * live before it: releases of failed or cancelled deploys must not push a rollback target out.
   * Absent: the newest keepReleases by name.
   */
  keptReleases?: string[];
  /** Health-gated activation: the path asked, a 2xx/3xx within timeoutSeconds. */
  healthCheck: { path: string; timeoutSeconds: number };
  /**
   * Generic Port: the user's command PM2 runs in the release (as the site user, `bash -c`, PORT set
   * to the site's port); null for the types whose framework starts them.
   */
  startCommand: string | null;
}

/** What the deploy steps learn and the control plane stores on the deployment. */
export interface CommitInfo {
  sha: string;
  message: string;
  author: string;
}

/** Told by the deploy steps as they learn things; implemented by the control plane. */
export interface DeployProgress {
  commitResolved(commit: CommitInfo): Promise<void>;
  /**
   * Fires when the user cancels the deployment (POST /api/v1/deployments/<uuid>/cancel): a running
   * hook or build stops its remote process group at once; later steps do not start; the live
   * release keeps serving.
   */
  readonly cancelled: AbortSignal;
}

export interface RollbackPlan {
  deploymentUuid: string;
  /** The kept release to make live again (a directory name under releases/). */
  release: string;
}

/**
 * The deploy steps, as the job runner sees them (jobs/site-job.ts): provisioning/deploy/index.ts
 * implements this; app/build-service.ts wires it in.
 */
export interface DeploySteps {
  deploy(site: ProvisionedSite, plan: DeployPlan, progress: DeployProgress): Step[];
  rollback(site: ProvisionedSite, plan: RollbackPlan): Step[];
}
