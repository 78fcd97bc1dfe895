-- What every peer program of the benchmarks does around its work: read N
-- from the command line, time `run(N)`, print the result on stdout and the
-- seconds on stderr (what bench/src/peers.rs reads). A script loads it with
-- dofile from its own folder, whatever the current one.
return function(run)
  local n = tonumber(arg[1])
  local started = os.clock()
  local result = run(n)
  local elapsed = os.clock() - started
  print(string.format("%.0f", result))
  io.stderr:write(string.format("%.6f\n", elapsed))
end
