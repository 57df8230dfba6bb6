# bench/plot.gp: one chart of bench/run's report, as PNG and SVG.
#
#   gnuplot -c bench/plot.gp ROWS OUT TITLE NROWS XMIN XMAX BASE GAP
#
# ROWS: the chart's rows from bench/report.awk (tab-separated: y, group, name, keys/s, bar
# label; group 0 the bar every ratio is taken to, 1 the other references, 2 leasejudge's
# contenders). Writes OUT.png and OUT.svg: horizontal bars of keys/s on a log axis from
# XMIN to XMAX, references above leasejudge's contenders (a dashed line at y GAP between
# them, none when GAP is 0), each bar labelled with its keys/s and ratio, a dotted line at
# the baseline's keys/s (BASE; none when 0).
rows = ARG1
out = ARG2
title = ARG3
nrows = real(ARG4)
xmin = real(ARG5)
xmax = real(ARG6)
base = real(ARG7)
gap = real(ARG8)

# Room on the left for the longest bar name (the margin counts characters).
stats rows using (strlen(strcol(3))) nooutput
left = STATS_max + 2 > 20 ? STATS_max + 2 : 20

width = 960
height = 110 + 26 * nrows
half = 0.36

set datafile separator "\t"
# Centred on the picture, not on the plot the left margin narrows.
set title title font ",12" offset -(left - 20) / 2.0, 0
set logscale x 10
set xrange [xmin:xmax]
set yrange [nrows + 0.7:0.3]
set format x "%.0s%c"
set xlabel "keys judged per second (log scale)"
set xtics nomirror
set mxtics 10
set ytics nomirror scale 0
unset y2tics
set grid xtics mxtics lc rgb "#cccccc" lw 1, lc rgb "#ececec" lw 1
set border 3 lc rgb "#444444"
unset key
set bmargin 5.5
# The legend, one line under the axis: a swatch and its words for each group.
y0 = 12.0 / height
y1 = 24.0 / height
set object 10 rect from screen 0.17, screen y0 to screen 0.19, screen y1 fc rgb "#4d4d4d" fs solid noborder
set label 10 "the reference each ratio is taken to" at screen 0.195, screen (y0 + y1) / 2 left
set object 11 rect from screen 0.47, screen y0 to screen 0.49, screen y1 fc rgb "#a6a6a6" fs solid noborder
set label 11 "other references" at screen 0.495, screen (y0 + y1) / 2 left
set object 12 rect from screen 0.66, screen y0 to screen 0.68, screen y1 fc rgb "#1f77b4" fs solid noborder
set label 12 "leasejudge's contenders" at screen 0.685, screen (y0 + y1) / 2 left
set style textbox opaque noborder margins 1, 1
set style fill solid 0.9 noborder
set lmargin left
set rmargin 4
if (gap > 0) {
  set arrow 1 from graph 0, first gap to graph 1, first gap nohead dt 2 lc rgb "#444444"
}
if (base > 0) {
  set arrow 2 from first base, graph 0 to first base, graph 1 nohead dt 3 lw 1.5 lc rgb "#555555" back
}

bar(g) = (column(2) == g) ? column(4) : NaN
set terminal pngcairo noenhanced size width, height font "sans,10" background rgb "white"
set output out . ".png"
plot rows using (bar(0)):1:(xmin):(bar(0)):($1 - half):($1 + half) with boxxyerror lc rgb "#4d4d4d" \
       title "the ratio's baseline (reference)", \
     rows using (bar(1)):1:(xmin):(bar(1)):($1 - half):($1 + half) with boxxyerror lc rgb "#a6a6a6" \
       title "other references", \
     rows using (bar(2)):1:(xmin):(bar(2)):($1 - half):($1 + half) with boxxyerror lc rgb "#1f77b4" \
       title "leasejudge", \
     rows using (xmin):1:ytic(3) with points ps 0 notitle, \
     rows using ($4 * 1.08):1:5 with labels left boxed font ",9" notitle

set terminal svg noenhanced size width, height font "sans,10" background rgb "white"
set output out . ".svg"
replot
set output
