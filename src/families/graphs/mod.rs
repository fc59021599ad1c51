//! Graph and grid search: islands, paths, colourings, schedules.

mod connected_components;
mod course_schedule;
mod graph_color;
mod largest_island;
mod shortest_path;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[
    &connected_components::ConnectedComponents,
    &course_schedule::CourseSchedule,
    &graph_color::GraphColor,
    &largest_island::LargestIsland,
    &shortest_path::ShortestPath,
];
