export { drain } from './drain';
