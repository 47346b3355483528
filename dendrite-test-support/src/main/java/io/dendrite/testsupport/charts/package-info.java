/** Charts of benchmark results, drawn with XChart ({@link io.dendrite.testsupport.charts.LineCharts}). */
package io.dendrite.testsupport.charts;
