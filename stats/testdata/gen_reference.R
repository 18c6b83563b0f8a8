# Generates reference.json, the reference vectors the Go tests of package
# stats compare against. R is the reference: t.test, prop.test, wilcox.test,
# chisq.test, p.adjust and quantile(type = 7) are the named definitions.
# Run from the repository root (needs Debian's r-base-core, not needed by CI):
#   Rscript stats/testdata/gen_reference.R
# Numbers are written with 17 significant digits so Go reads back the exact
# doubles R used. Samples with many repeated values are stored as a table of
# distinct values and counts (the tests here do not depend on order).

set.seed(20240605)
out_path <- "stats/testdata/reference.json"

num <- function(x) {
  x <- as.numeric(x)
  stopifnot(all(is.finite(x)))
  sprintf("%.17g", x)
}
arr <- function(x) paste0("[", paste(num(x), collapse = ","), "]")
str <- function(s) paste0("\"", s, "\"")
obj <- function(...) {
  f <- list(...)
  paste0("{", paste(paste0(str(names(f)), ":", unlist(f)), collapse = ","), "}")
}
lst <- function(items) paste0("[\n", paste(items, collapse = ",\n"), "\n]")

sample_json <- function(x) {
  v <- sort(unique(x))
  if (length(x) > 200 && length(v) * 4 < length(x)) {
    counts <- as.vector(table(factor(x, levels = v)))
    return(obj(values = arr(v), counts = arr(counts)))
  }
  obj(values = arr(x))
}

# Data generators: f(n, effect) with effect in units of the spread.
gens <- list(
  normal = function(n, e) rnorm(n, 10 + 2 * e, 2),
  lognormal = function(n, e) rlnorm(n, log(100) + 0.8 * e, 0.8),
  heavy_t2 = function(n, e) 50 + 5 * (rt(n, df = 2) + e),
  cauchy = function(n, e) rcauchy(n, e, 1),
  exponential = function(n, e) rexp(n, 1 / (1 + e)),
  latency_ms = function(n, e) round(rlnorm(n, log(800) + 0.6 * e, 0.6)),
  counts = function(n, e) rpois(n, 2 * (1 + e)),
  revenue = function(n, e) ifelse(runif(n) < 0.85, 0, round(rlnorm(n, log(40) + e, 1))),
  uniform = function(n, e) runif(n, e, 1 + e)
)

datasets <- list()
add_dataset <- function(gen, nc, nt, effect) {
  g <- gens[[gen]]
  d <- list(id = length(datasets), gen = gen, effect = effect,
            control = g(nc, 0), treatment = g(nt, effect))
  datasets[[length(datasets) + 1]] <<- d
  d
}
dataset_json <- function(d) {
  obj(id = d$id, name = str(sprintf("%s nc=%d nt=%d effect=%g", d$gen, length(d$control), length(d$treatment), d$effect)),
      control = sample_json(d$control), treatment = sample_json(d$treatment))
}

welch <- list(); mw <- list(); perm <- list(); boot <- list()

welch_case <- function(d, alpha) {
  r <- tryCatch(t.test(d$treatment, d$control, var.equal = FALSE, conf.level = 1 - alpha), error = function(e) NULL)
  if (is.null(r) || !is.finite(r$statistic)) return()
  mc <- mean(d$control); mt <- mean(d$treatment)
  lift <- list()
  if (mc != 0) {
    se <- sqrt(var(d$treatment) / length(d$treatment) / mc^2 + mt^2 * var(d$control) / length(d$control) / mc^4)
    l <- (mt - mc) / mc
    h <- qnorm(1 - alpha / 2) * se
    lift <- list(rel_lift = num(l), rel_ci_low = num(l - h), rel_ci_high = num(l + h))
  }
  welch[[length(welch) + 1]] <<- do.call(obj, c(list(dataset = d$id, alpha = num(alpha),
    statistic = num(r$statistic), df = num(r$parameter), p_value = num(r$p.value),
    effect = num(mt - mc), ci_low = num(r$conf.int[1]), ci_high = num(r$conf.int[2]),
    se = num(r$stderr)), lift))
}

# Hodges-Lehmann shift and CI as stats/hodgeslehmann.go defines them, from the
# explicit sorted pairwise differences (only where nx*ny is small enough).
hodges_lehmann <- function(x, y, sigma, alpha) {
  d <- sort(as.vector(outer(x, y, "-")))
  n <- length(d)
  k <- floor(n / 2 - qnorm(1 - alpha / 2) * sigma + 0.5)
  k <- min(max(k, 1), n)
  list(estimate = median(d), low = d[k], high = d[n + 1 - k])
}

mw_case <- function(d, alpha) {
  x <- d$treatment; y <- d$control
  # stats.Compare calls data with no spread in either arm undefined
  if (var(x) == 0 && var(y) == 0) return()
  r <- wilcox.test(x, y, exact = FALSE, correct = TRUE)
  nx <- as.numeric(length(x)); ny <- as.numeric(length(y))
  ties <- table(c(x, y))
  sigma <- sqrt((nx * ny / 12) * ((nx + ny + 1) - sum(ties^3 - ties) / ((nx + ny) * (nx + ny - 1))))
  f <- list(dataset = d$id, alpha = num(alpha), statistic = num(r$statistic), p_value = num(r$p.value))
  if (as.numeric(nx) * ny <= 4e6) {
    hl <- hodges_lehmann(x, y, sigma, alpha)
    f <- c(f, list(effect = num(hl$estimate), ci_low = num(hl$low), ci_high = num(hl$high)))
  }
  mw[[length(mw) + 1]] <<- do.call(obj, f)
}

# Bootstrap as stats/bootstrap.go defines it, with many more draws than the Go
# test uses; the Go test compares within Monte Carlo bounds.
boot_draws <- 20000
bootstrap_ref <- function(d, alpha) {
  x <- d$treatment; y <- d$control
  diffs <- replicate(boot_draws, mean(sample(x, replace = TRUE)) - mean(sample(y, replace = TRUE)))
  p <- min(1, 2 * (min(sum(diffs <= 0), sum(diffs >= 0)) + 1) / (boot_draws + 1))
  q <- quantile(diffs, c(alpha / 2, 1 - alpha / 2), type = 7, names = FALSE)
  list(draws = num(boot_draws), p_value = num(p), ci_low = num(q[1]), ci_high = num(q[2]), boot_se = num(sd(diffs)))
}

boot_case <- function(d, alpha) {
  b <- bootstrap_ref(d, alpha)
  boot[[length(boot) + 1]] <<- do.call(obj, c(list(dataset = d$id, alpha = num(alpha), effect = num(mean(d$treatment) - mean(d$control))), b))
}

# Permutation p: exact over all relabellings when there are few, else R's own
# Monte Carlo estimate with many draws.
perm_case <- function(d, alpha) {
  x <- d$treatment; y <- d$control
  pooled <- c(x, y); n <- length(pooled); nt <- length(x)
  obs <- mean(x) - mean(y)
  tol <- 1e-9 * mean(abs(pooled))
  if (choose(n, nt) <= 2e5) {
    idx <- combn(n, nt)
    st <- colSums(matrix(pooled[idx], nrow = nt))
    diffs <- st / nt - (sum(pooled) - st) / (n - nt)
    p <- mean(abs(diffs) >= abs(obs) - tol); draws <- ncol(idx); exact <- "true"
  } else {
    draws <- 100000
    diffs <- replicate(draws, { s <- sample.int(n, nt); mean(pooled[s]) - mean(pooled[-s]) })
    p <- mean(abs(diffs) >= abs(obs) - tol); exact <- "false"
  }
  b <- bootstrap_ref(d, alpha)
  perm[[length(perm) + 1]] <<- obj(dataset = d$id, alpha = num(alpha), effect = num(obs),
    p_value = num(p), exact = exact, reference_draws = num(draws),
    ci_low = b$ci_low, ci_high = b$ci_high, boot_se = b$boot_se)
}

# --- continuous / count comparisons: Welch and Mann-Whitney on shared data ---
sizes <- list(c(2, 2), c(2, 3), c(3, 5), c(5, 5), c(8, 12), c(20, 20), c(30, 45),
              c(100, 100), c(250, 180), c(1000, 1000), c(3000, 2000))
effects <- c(0, 1e-3, 0.2, 1, 8)
for (gen in names(gens)) {
  for (s in sizes) {
    e <- sample(effects, 1)
    d <- add_dataset(gen, s[1], s[2], e)
    alpha <- sample(c(0.05, 0.05, 0.01, 0.1), 1)
    welch_case(d, alpha)
    mw_case(d, alpha)
  }
}
# large samples, integer-valued so they store compactly; few of them
for (spec in list(list("latency_ms", 100000, 100000, 0.01), list("counts", 100000, 99000, 0),
                  list("revenue", 30000, 30000, 0.05), list("latency_ms", 10000, 12000, 0.3),
                  list("counts", 20000, 20000, 0.5))) {
  d <- add_dataset(spec[[1]], spec[[2]], spec[[3]], spec[[4]])
  welch_case(d, 0.05)
  mw_case(d, 0.05)
}
# huge effects: p far in the tail (down to ~1e-300)
for (spec in list(list("normal", 300, 300, 4), list("normal", 2000, 2000, 1.3), list("lognormal", 5000, 5000, 1),
                  list("uniform", 1500, 1500, 1))) {
  d <- add_dataset(spec[[1]], spec[[2]], spec[[3]], spec[[4]])
  welch_case(d, 0.05)
  mw_case(d, 0.05)
}

# --- resampling tests, on sizes where R can afford many draws ---
for (spec in list(list("normal", 4, 5, 1), list("normal", 6, 6, 0), list("exponential", 7, 8, 1),
                  list("counts", 8, 8, 0.5), list("cauchy", 5, 7, 2), list("uniform", 8, 7, 0.2),
                  list("lognormal", 6, 9, 1), list("normal", 40, 40, 0.5), list("revenue", 60, 50, 1),
                  list("heavy_t2", 50, 50, 0.3))) {
  perm_case(add_dataset(spec[[1]], spec[[2]], spec[[3]], spec[[4]]), 0.05)
}
for (spec in list(list("normal", 15, 15, 0), list("normal", 30, 40, 0.5), list("exponential", 50, 50, 0.3),
                  list("lognormal", 100, 80, 0.2), list("counts", 200, 200, 0.1), list("uniform", 20, 25, 1),
                  list("heavy_t2", 150, 150, 0), list("latency_ms", 300, 300, 0.2), list("normal", 1000, 1000, 0.05),
                  list("revenue", 400, 400, 0.5))) {
  boot_case(add_dataset(spec[[1]], spec[[2]], spec[[3]], spec[[4]]), sample(c(0.05, 0.1), 1))
}

# --- two-proportion z-test (prop.test without continuity correction) ---
ztests <- list()
zspecs <- list(c(2, 2, 0.5, 0.5), c(3, 4, 0.3, 0.6), c(10, 10, 0.2, 0.4), c(25, 30, 0.5, 0.5))
for (n in c(50, 200, 1000, 5000, 20000, 100000)) for (pc in c(0.001, 0.02, 0.1, 0.5)) {
  zspecs[[length(zspecs) + 1]] <- c(n, round(n * sample(c(0.7, 1, 1.3), 1)), pc, pc * sample(c(1, 1.001, 1.05, 1.3, 3), 1))
}
zspecs <- c(zspecs, list(c(100000, 100000, 0.3, 0.32), c(40000, 40000, 0.1, 0.2), c(1e5, 1e5, 0.05, 0.09)))
for (z in zspecs) {
  nc <- z[1]; nt <- z[2]
  sc <- rbinom(1, nc, z[3]); st <- rbinom(1, nt, min(z[4], 1))
  if (sc + st == 0 || sc + st == nc + nt) next
  r <- suppressWarnings(prop.test(c(st, sc), c(nt, nc), correct = FALSE))
  ztests[[length(ztests) + 1]] <- obj(n_control = num(nc), ones_control = num(sc), n_treatment = num(nt), ones_treatment = num(st),
    alpha = num(0.05), x_squared = num(r$statistic), p_value = num(r$p.value), effect = num(st / nt - sc / nc),
    ci_low = num(r$conf.int[1]), ci_high = num(r$conf.int[2]))
}

# --- sample ratio mismatch (chisq.test goodness of fit) ---
srm <- list()
weight_sets <- list(c(50, 50), c(90, 10), c(1, 1, 1), c(33, 33, 34), c(10, 20, 30, 40), c(1, 1, 1, 1, 1, 1), c(0.7, 0.3))
for (total in c(10, 50, 1000, 123457, 1e7)) for (w in weight_sets) {
  skew <- sample(c(1, 1, 1.01, 1.2, 3), 1)
  prob <- w * c(skew, rep(1, length(w) - 1)); prob <- prob / sum(prob)
  x <- as.vector(rmultinom(1, total, prob))
  if (sum(x) == 0) next
  r <- suppressWarnings(chisq.test(x, p = w / sum(w)))
  srm[[length(srm) + 1]] <- obj(observed = arr(x), weights = arr(w), chi_square = num(r$statistic), df = num(r$parameter), p_value = num(r$p.value))
}

# --- multiple testing (p.adjust) ---
padj <- list()
for (i in 1:20) {
  m <- sample(c(1, 2, 3, 5, 10, 20, 50, 200), 1)
  p <- pmin(1, c(runif(m)^sample(c(1, 3, 8), 1)))
  if (m > 3) { p[2] <- p[1]; p[3] <- 1e-300 }  # ties and a far-tail value
  padj[[length(padj) + 1]] <- obj(p = arr(p), bh = arr(p.adjust(p, "BH")), holm = arr(p.adjust(p, "holm")))
}

# --- per-arm distribution: mean, sd, min, max, type-7 quantiles ---
dists <- list()
for (gen in names(gens)) for (n in c(1, 2, 3, 10, 99, 1000)) {
  x <- gens[[gen]](n, 0)
  dists[[length(dists) + 1]] <- obj(sample = sample_json(x), mean = num(mean(x)), sd = num(if (n > 1) sd(x) else 0),
    min = num(min(x)), max = num(max(x)), quantiles = arr(quantile(x, c(0.05, 0.25, 0.5, 0.75, 0.95), type = 7, names = FALSE)))
}
x <- gens$latency_ms(100000, 0)
dists[[length(dists) + 1]] <- obj(sample = sample_json(x), mean = num(mean(x)), sd = num(sd(x)),
  min = num(min(x)), max = num(max(x)), quantiles = arr(quantile(x, c(0.05, 0.25, 0.5, 0.75, 0.95), type = 7, names = FALSE)))

# --- tail probabilities, two-sided for t and normal, upper for chi-square ---
tails <- list()
for (x in c(0.5, 1.96, 5, 10, 20, 30, 37, 37.5)) tails[[length(tails) + 1]] <- obj(dist = str("normal"), x = num(x), df = num(0), p = num(2 * pnorm(-x)))
for (df in c(1, 2.5, 7.3, 30, 151.7, 1000, 2e5)) for (x in c(0.1, 2, 6, 15, 40, 200, 1e4)) {
  p <- 2 * pt(-x, df)
  if (p > 1e-300) tails[[length(tails) + 1]] <- obj(dist = str("t"), x = num(x), df = num(df), p = num(p))
}
for (df in c(1, 2, 5, 20)) for (x in c(0.5, 3, 20, 100, 600, 1300)) {
  p <- pchisq(x, df, lower.tail = FALSE)
  if (p > 1e-300) tails[[length(tails) + 1]] <- obj(dist = str("chisq"), x = num(x), df = num(df), p = num(p))
}

json <- paste0("{\n", paste(c(
  paste0(str("generator"), ":", str("stats/testdata/gen_reference.R")),
  paste0(str("r_version"), ":", str(R.version.string)),
  paste0(str("datasets"), ":", lst(vapply(datasets, dataset_json, ""))),
  paste0(str("welch_t"), ":", lst(unlist(welch))),
  paste0(str("mann_whitney"), ":", lst(unlist(mw))),
  paste0(str("permutation"), ":", lst(unlist(perm))),
  paste0(str("bootstrap"), ":", lst(unlist(boot))),
  paste0(str("z_test"), ":", lst(unlist(ztests))),
  paste0(str("srm"), ":", lst(unlist(srm))),
  paste0(str("p_adjust"), ":", lst(unlist(padj))),
  paste0(str("distribution"), ":", lst(unlist(dists))),
  paste0(str("tails"), ":", lst(unlist(tails)))
), collapse = ",\n"), "\n}\n")
writeLines(json, out_path, sep = "")
cat(sprintf("wrote %s: %d datasets, welch %d, mann_whitney %d, permutation %d, bootstrap %d, z_test %d, srm %d, p_adjust %d, distribution %d, tails %d\n",
            out_path, length(datasets), length(welch), length(mw), length(perm), length(boot), length(ztests), length(srm), length(padj), length(dists), length(tails)))

# --- Variance-reduced and non-mean metrics (issue 12): reference_variance.json ---
# A separate seed and file, so the vectors above do not change when these do.
# CUPED: theta is the slope of lm(y ~ x) over both arms together; the test is
# t.test on the adjusted values. Ratio: ratio of means per arm with the
# delta-method variance (covariance included). Quantile: quantile(type = 7)
# of all calls per arm with Woodruff's user-clustered standard error. The
# always-valid interval is the asymptotic confidence sequence of
# stats/sequential.go, written out here from its formula.
set.seed(20261123)
var_path <- "stats/testdata/reference_variance.json"

conf_seq <- function(d, se, n, nstar, alpha) {
  rho2 <- (-2 * log(alpha) + log(-2 * log(alpha) + 1)) / nstar
  nr <- n * rho2 + 1
  half <- se * sqrt(n) * sqrt(2 * nr / (n^2 * rho2) * log(sqrt(nr) / alpha))
  logE <- rho2 * n * (d / se)^2 / (2 * nr) - 0.5 * log(nr)
  list(low = d - half, high = d + half, p = if (logE > 0) exp(-logE) else 1)
}

cuped <- list()
cuped_case <- function(name, yc, xc, yt, xt, alpha = 0.05, nstar = 5000) {
  x <- c(xc, xt); y <- c(yc, yt)
  theta <- unname(coef(lm(y ~ x))[2])
  if (!is.finite(theta)) theta <- 0
  adjc <- yc - theta * (xc - mean(x)); adjt <- yt - theta * (xt - mean(x))
  r <- t.test(adjt, adjc, var.equal = FALSE, conf.level = 1 - alpha)
  raw <- var(yt) / length(yt) + var(yc) / length(yc)
  cs <- conf_seq(mean(adjt) - mean(adjc), r$stderr, length(yc) + length(yt), nstar, alpha)
  cuped[[length(cuped) + 1]] <<- obj(name = str(name), alpha = num(alpha), nstar = num(nstar),
    control_y = arr(yc), control_x = arr(xc), treatment_y = arr(yt), treatment_x = arr(xt),
    theta = num(theta), effect = num(mean(adjt) - mean(adjc)), se = num(r$stderr),
    statistic = num(r$statistic), p_value = num(r$p.value), ci_low = num(r$conf.int[1]), ci_high = num(r$conf.int[2]),
    variance_reduction = num(1 - r$stderr^2 / raw),
    seq_ci_low = num(cs$low), seq_ci_high = num(cs$high), seq_p = num(cs$p))
}
cuped_case("issue 12 example", c(2, 1, 5, 3), c(0.3, 0.5, 0.9, 22), c(2, 1, 5, 3), c(0.3, 0.5, 0.9, 22))
for (n in c(50, 500, 5000)) for (rho in c(0, 0.5, 0.9)) for (effect in c(0, 0.3)) {
  pre <- function(n) rlnorm(n, 1, 0.7)
  xc <- pre(n); xt <- pre(round(n * 1.1))
  yc <- 2 + rho * (xc - mean(xc)) + rnorm(n, 0, 1)
  yt <- 2 + effect + rho * (xt - mean(xt)) + rnorm(length(xt), 0, 1)
  # Users without pre-period data have x = 0.
  xc[runif(n) < 0.2] <- 0
  cuped_case(sprintf("n=%d rho=%g effect=%g", n, rho, effect), yc, xc, yt, xt)
}

ratio_est <- function(num, den) {
  r <- mean(num) / mean(den)
  v <- (var(num) - 2 * r * cov(num, den) + r^2 * var(den)) / (length(num) * mean(den)^2)
  list(r = r, v = v, check = sum(num) / sum(den))
}
ratios <- list()
for (n in c(30, 300, 3000)) for (effect in c(0, 0.2)) for (alpha in c(0.05, 0.1)) {
  arm <- function(n, e) {
    calls <- rpois(n, 4)
    cost <- vapply(calls, function(k) sum(rlnorm(k, log(0.002) + e, 0.5)), 0)
    list(num = cost, den = calls)
  }
  c <- arm(n, 0); t <- arm(n + 7, effect)
  ec <- ratio_est(c$num, c$den); et <- ratio_est(t$num, t$den)
  stopifnot(abs(ec$r - ec$check) < 1e-12 * ec$r)
  d <- et$r - ec$r; se <- sqrt(ec$v + et$v); z <- qnorm(1 - alpha / 2)
  lse <- sqrt(et$v / ec$r^2 + et$r^2 * ec$v / ec$r^4)
  ratios[[length(ratios) + 1]] <- obj(alpha = num(alpha),
    control_num = arr(c$num), control_den = arr(c$den), treatment_num = arr(t$num), treatment_den = arr(t$den),
    control_ratio = num(ec$r), treatment_ratio = num(et$r), effect = num(d), se = num(se),
    ci_low = num(d - z * se), ci_high = num(d + z * se), p_value = num(2 * pnorm(-abs(d / se))),
    rel_lift = num(et$r / ec$r - 1), rel_se = num(lse))
}

woodruff <- function(values, user, p, z) {
  q <- quantile(values, p, type = 7, names = FALSE)
  users <- unique(user)
  a <- vapply(users, function(u) sum(values[user == u] <= q), 0)
  k <- vapply(users, function(u) sum(user == u), 0)
  phat <- sum(a) / sum(k)
  sdp <- sqrt(var(a - phat * k) / length(users)) / mean(k)
  lo <- max(p - z * sdp, 0); hi <- min(p + z * sdp, 1)
  se <- (quantile(values, hi, type = 7, names = FALSE) - quantile(values, lo, type = 7, names = FALSE)) / (2 * z)
  list(q = q, se = se)
}
quantiles <- list()
for (n in c(20, 200, 1000)) for (p in c(0.5, 0.9, 0.95, 0.99)) for (effect in c(0, 0.3)) {
  arm <- function(n, e) {
    calls <- rpois(n, 3) + 1
    user <- rep(seq_len(n), calls)
    base <- rnorm(n, 0, 0.3)[user]
    list(values = round(exp(log(800) + e + base + rnorm(length(user), 0, 0.5))), user = user, offsets = c(0, cumsum(calls)))
  }
  c <- arm(n, 0); t <- arm(n + 3, effect); alpha <- 0.05; z <- qnorm(1 - alpha / 2)
  wc <- woodruff(c$values, c$user, p, z); wt <- woodruff(t$values, t$user, p, z)
  d <- wt$q - wc$q; se <- sqrt(wc$se^2 + wt$se^2)
  quantiles[[length(quantiles) + 1]] <- obj(p = num(p), alpha = num(alpha),
    control_values = arr(c$values), control_offsets = arr(c$offsets),
    treatment_values = arr(t$values), treatment_offsets = arr(t$offsets),
    control_quantile = num(wc$q), treatment_quantile = num(wt$q), control_se = num(wc$se), treatment_se = num(wt$se),
    effect = num(d), ci_low = num(d - z * se), ci_high = num(d + z * se))
}

json <- paste0("{\n", paste(c(
  paste0(str("generator"), ":", str("stats/testdata/gen_reference.R")),
  paste0(str("r_version"), ":", str(R.version.string)),
  paste0(str("cuped"), ":", lst(unlist(cuped))),
  paste0(str("ratio"), ":", lst(unlist(ratios))),
  paste0(str("quantile"), ":", lst(unlist(quantiles)))
), collapse = ",\n"), "\n}\n")
writeLines(json, var_path, sep = "")
cat(sprintf("wrote %s: cuped %d, ratio %d, quantile %d\n", var_path, length(cuped), length(ratios), length(quantiles)))

# --- Power and duration (issue 30): reference_power.json ---
# R's power.t.test and power.prop.test (two-sample, two-sided, strict =
# FALSE) are the definitions of the fixed-horizon numbers of stats/power.go.
# n is per group (the Go functions take both arms' users: 2n). Solved
# values use tol = 1e-12 so uniroot's tolerance does not blur them.
power_path <- "stats/testdata/reference_power.json"
tcases <- list()
for (n in c(3, 8, 20, 100, 1000, 50000)) for (delta in c(0.05, 0.3, 1)) for (sd in c(1, 2.5)) for (alpha in c(0.05, 0.01)) {
  pw <- power.t.test(n = n, delta = delta, sd = sd, sig.level = alpha)$power
  tcases[[length(tcases) + 1]] <- obj(n = num(n), delta = num(delta), sd = num(sd), alpha = num(alpha), power = num(pw))
}
tsolve <- list()
for (delta in c(0.02, 0.1, 0.5, 2)) for (sd in c(1, 3)) for (power in c(0.8, 0.9)) {
  n <- power.t.test(delta = delta, sd = sd, power = power, tol = 1e-12)$n
  d <- power.t.test(n = 500, sd = sd, power = power, tol = 1e-12)$delta
  tsolve[[length(tsolve) + 1]] <- obj(delta = num(delta), sd = num(sd), power = num(power), n = num(n), n_for_delta = num(500), delta_at_n = num(d))
}
pcases <- list()
for (n in c(50, 400, 5000, 100000)) for (p1 in c(0.02, 0.1, 0.5)) for (lift in c(0.1, 0.5)) for (alpha in c(0.05, 0.01)) {
  p2 <- p1 * (1 + lift)
  pw <- power.prop.test(n = n, p1 = p1, p2 = p2, sig.level = alpha)$power
  pcases[[length(pcases) + 1]] <- obj(n = num(n), p1 = num(p1), p2 = num(p2), alpha = num(alpha), power = num(pw))
}
psolve <- list()
for (p1 in c(0.02, 0.1, 0.5)) for (lift in c(0.05, 0.2)) for (power in c(0.8, 0.9)) {
  p2 <- p1 * (1 + lift)
  n <- power.prop.test(p1 = p1, p2 = p2, power = power, tol = 1e-12)$n
  q2 <- power.prop.test(n = 2000, p1 = p1, power = power, tol = 1e-12)$p2
  psolve[[length(psolve) + 1]] <- obj(p1 = num(p1), p2 = num(p2), power = num(power), n = num(n), n_for_p2 = num(2000), p2_at_n = num(q2))
}
json <- paste0("{\n", paste(c(
  paste0(str("generator"), ":", str("stats/testdata/gen_reference.R")),
  paste0(str("r_version"), ":", str(R.version.string)),
  paste0(str("t_power"), ":", lst(unlist(tcases))),
  paste0(str("t_solve"), ":", lst(unlist(tsolve))),
  paste0(str("prop_power"), ":", lst(unlist(pcases))),
  paste0(str("prop_solve"), ":", lst(unlist(psolve)))
), collapse = ",\n"), "\n}\n")
writeLines(json, power_path, sep = "")
cat(sprintf("wrote %s: t power %d, t solve %d, prop power %d, prop solve %d\n", power_path, length(tcases), length(tsolve), length(pcases), length(psolve)))

# --- Phase-stratified effect (issue 30): reference_stratified.json ---
# stats.CompareStratified written out from its definition: per-stratum
# Welch pieces weighted by the stratum's share of users, the
# Welch-Satterthwaite df over the 2K variance terms, the delta-method lift
# of the stratified means and the always-valid sequence at N users.
set.seed(20261127)
strat_path <- "stats/testdata/reference_stratified.json"
strat <- list()
for (k in c(1, 2, 3)) for (n in c(30, 400, 3000)) for (effect in c(0, 0.2)) {
  sizes <- lapply(seq_len(k), function(i) c(nc = round(n * runif(1, 0.3, 0.7)), nt = round(n * runif(1, 0.3, 0.7))))
  groups <- lapply(seq_len(k), function(i) {
    level <- 5 + i  # a trend between phases
    list(c = round(rnorm(sizes[[i]][["nc"]], level, 2), 3), t = round(rnorm(sizes[[i]][["nt"]], level + effect, 2.5), 3))
  })
  N <- sum(sapply(groups, function(g) length(g$c) + length(g$t)))
  w <- sapply(groups, function(g) (length(g$c) + length(g$t)) / N)
  vc <- sapply(groups, function(g) var(g$c) / length(g$c)); vt <- sapply(groups, function(g) var(g$t) / length(g$t))
  mc <- sapply(groups, function(g) mean(g$c)); mt <- sapply(groups, function(g) mean(g$t))
  d <- sum(w * (mt - mc)); v <- sum(w^2 * (vc + vt)); se <- sqrt(v)
  nc <- sapply(groups, function(g) length(g$c)); nt <- sapply(groups, function(g) length(g$t))
  df <- v^2 / sum((w^2 * vc)^2 / (nc - 1) + (w^2 * vt)^2 / (nt - 1))
  alpha <- 0.05; q <- qt(1 - alpha / 2, df)
  Mc <- sum(w * mc); Mt <- sum(w * mt); Vc <- sum(w^2 * vc); Vt <- sum(w^2 * vt)
  lift <- Mt / Mc - 1; lse <- sqrt(Vt / Mc^2 + Mt^2 * Vc / Mc^4); z <- qnorm(1 - alpha / 2)
  nstar <- 5000; rho2 <- (-2 * log(alpha) + log(-2 * log(alpha) + 1)) / nstar; nr <- N * rho2 + 1
  avhalf <- se * sqrt(N) * sqrt(2 * nr / (N^2 * rho2) * log(sqrt(nr) / alpha))
  strat[[length(strat) + 1]] <- obj(
    strata = lst(sapply(groups, function(g) obj(control = arr(g$c), treatment = arr(g$t)))),
    effect = num(d), se = num(se), df = num(df), statistic = num(d / se), p_value = num(2 * pt(-abs(d / se), df)),
    ci_low = num(d - q * se), ci_high = num(d + q * se), rel_lift = num(lift), rel_ci_low = num(lift - z * lse), rel_ci_high = num(lift + z * lse),
    av_ci_low = num(d - avhalf), av_ci_high = num(d + avhalf))
}
json <- paste0("{\n", paste(c(
  paste0(str("generator"), ":", str("stats/testdata/gen_reference.R")),
  paste0(str("r_version"), ":", str(R.version.string)),
  paste0(str("stratified"), ":", lst(unlist(strat)))
), collapse = ",\n"), "\n}\n")
writeLines(json, strat_path, sep = "")
cat(sprintf("wrote %s: stratified %d\n", strat_path, length(strat)))
